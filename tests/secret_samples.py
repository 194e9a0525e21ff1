"""Secrets in the formats they take in the wild (synthetic values, real shapes), shared by the
redaction tests of transcripts and of the agents' write tools: one policy, the same samples.

Each: (family, text as a person or a tool would write it, the secret that must not survive).
"""

AZURE_KEY = "E5JJ7L0x6P8J3b7eyVodNj/ATjFS/UHGi13AIBkfXx9Ul4wnNB8w6qmp4FVAKaMZibxfJDqY/bneFfLUKrdBLA=="
SAS_SIG = "Tp032eITSwE2P0AIrDz%2FhOmuxSwRL2nPY86F0afLsRo%3D"
TWILIO_TOKEN = "5561797b66cc71e13003b874ec470373"
AWS_SECRET = "K4M94N/23jBtdnlDyzhGv/71MiR64I+roPTQUmX5"

SAMPLES = [
    ("azure connection string",
     f"DefaultEndpointsProtocol=https;AccountName=contosoprod;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
     AZURE_KEY),
    ("azure service bus",
     f"Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={AZURE_KEY[:44]}",
     AZURE_KEY[:44]),
    ("azure SAS sig",
     "backup from https://contosoprod.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=sco&sp=rl"
     f"&se=2026-12-31T23:59:59Z&st=2026-11-01T00:00:00Z&spr=https&sig={SAS_SIG} worked",
     SAS_SIG),
    (".netrc one line", "machine api.heroku.com login ops@example.com password 9f8e7d6c-5b4a-4321-9abc-def012345678",
     "9f8e7d6c-5b4a-4321-9abc-def012345678"),
    (".netrc several lines", "machine registry.example.org\n  login deploy\n  password Qm9#vT2!xLp8\n",
     "Qm9#vT2!xLp8"),
    ("curl -u", "ran curl -u deploy:Wq7#pLz92vXk https://api.example.com/v1/builds", "Wq7#pLz92vXk"),
    ("curl --user", "curl -s --user 'admin:S3cure!Pass2026' https://jenkins.local/api/json", "S3cure!Pass2026"),
    ("Authorization: Basic", 'curl -H "Authorization: Basic ZGVwbG95OldxNyNwTHo5MnZYaw==" https://api.example.com',
     "ZGVwbG95OldxNyNwTHo5MnZYaw=="),
    ("mysql -p", "mysql -h db.internal -u root -pR00tPa55word! billing < dump.sql", "R00tPa55word!"),
    ("mysqldump -p quoted", "mysqldump -uadmin -p'xK9$mQ2vL7' shop > shop.sql", "xK9$mQ2vL7"),
    ("docker login -p", "docker login -u ci-bot -p dckr_Zx81kLm0Qa registry.example.com", "dckr_Zx81kLm0Qa"),
    ("twilio auth token", f"twilio account AC{'3' * 6}{TWILIO_TOKEN[:26]} auth token {TWILIO_TOKEN}", TWILIO_TOKEN),
    ("twilio client", f'client = Client("AC0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e", "{TWILIO_TOKEN}")', TWILIO_TOKEN),
    ("AWS secret key in prose", f"the AWS secret key for the backup user is {AWS_SECRET} (rotate in March)", AWS_SECRET),
    ("password in prose", "the pg password is Tr0ub4dor&3, change it after the audit", "Tr0ub4dor&3"),
    ("password in prose, quoted", "note: prod postgres password was `hunter2-prod` until May", "hunter2-prod"),
    ("AWS access key id", "aws id AKIAIOSFODNN7EXAMPLE in the log", "AKIAIOSFODNN7EXAMPLE"),
]

# prose that talks about secrets without holding one: left exactly as written
PROSE = [
    "the token of appreciation was nice; pass the salt; my keyboard works",
    "the password is required on first login, and the password was changed yesterday",
    "we reset the pg password after the audit; ask Ana for the new one",
    "basic auth is off; the Authorization header is set by the proxy",
    "curl -u is how we pass credentials; docker login -p is deprecated, use --password-stdin",
    "twilio auth token rotation is on the list for Friday",
    "mysql -p prompts for the password; mysql -P 3306 sets the port",
    "commit 3f2c1a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a fixed the aws region bug",
]
