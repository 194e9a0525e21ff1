"""Secrets kept out of what clawmem indexes, logs and shows.

`redact(text)` masks secrets in free text (session transcripts before they are indexed, every
log line): the secret patterns of detect-secrets (Yelp's maintained set: AWS, Stripe, GitLab,
GitHub, Slack, JWTs, passwords in URLs, private keys…), a few kinds it does not know yet
(Hugging Face, OpenAI project keys, Google, Groq…), KEY=value / JSON / flag / header forms,
and every secret clawmem itself was given (a provider's API key and credential headers: see
`remember`). A mask names the kind and shows at most the last 4 characters.

`mask_url(url)` hides the credentials a URL can carry (`user:pass@`, `?key=…`), for a
provider's base URL in messages, logs and the index's meta.

detect-secrets loads (a quarter of a second) on the first text that might hold one of its
secrets (`may_hold_token`), never on a search, nor for a log line of words and numbers.
"""

from __future__ import annotations

import _thread  # not threading: the same lock without its import (~1 ms of every clawmem index)
import re
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# detect-secrets plugins not used: public IP addresses are no credentials, and the private
# key plugin finds only the BEGIN line, where _PEM masks the whole key
SKIPPED_PLUGINS = {"IPPublicDetector", "PrivateKeyDetector"}
CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|cookie", re.I)  # request headers that carry credentials
SECRET_NAME = re.compile(r"auth|key|token|secret|passw|pwd|sig|credential|cookie|session", re.I)
MIN_TAIL = 12  # shorter secrets show no characters at all

# kinds detect-secrets 1.5 does not know, and the shapes secrets take in config-like text
_EXTRA_TOKENS = [
    ("Hugging Face Token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("JSON Web Token", re.compile(r"\beyJ[\w-]+\.eyJ[\w-]+\.[\w-]*")),  # with its signature
    ("OpenAI-style Key", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")),
    ("Stripe Key", re.compile(r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}")),
    ("Google API Key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    ("Groq Key", re.compile(r"\bgsk_[A-Za-z0-9]{20,}")),
    ("Perplexity Key", re.compile(r"\bpplx-[A-Za-z0-9]{20,}")),
    ("npm Token", re.compile(r"\bnpm_[A-Za-z0-9]{30,}")),
    ("GitHub Token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}")),
    ("Slack Token", re.compile(r"\bxapp-[A-Za-z0-9-]{20,}")),
]
_ASSIGNMENTS = [  # the secret is the last group
    re.compile(r"\b[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)\b\s*[=:]\s*[\"']?([^\s\"']{4,})"),
    re.compile(r"\"(?:apiKey|api_key|token|secret|password|passwd|accessToken|refreshToken)\"\s*:\s*\"([^\"]{4,})"),
    re.compile(r"--(?:api-key|token|secret|password|passwd)[= ][\"']?([^\s\"']{4,})"),
    re.compile(r"\bBearer\s+([A-Za-z0-9._~+/=-]{8,})", re.I),
    # a password in a URL, whatever sub-delimiters it holds (!$&'()*+,;= are all legal there;
    # detect-secrets' pattern stops at them): everything between user: and the last @ of the authority
    re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@]+:([^\s/?#]+)@[^\s@/?#]+"),
    # the credentials-file and .env form, any case (`aws_secret_access_key = …`, `db.password: …`)
    re.compile(r"(?<![\w.-])[\w.-]*(?:secret|token|passw(?:or)?d|_key|apikey)[\w.-]*[ \t]*[=:][ \t]*[\"']?([^\s\"']{4,})", re.I),
    # Azure connection strings (storage AccountKey=, Service Bus / Event Hubs SharedAccessKey=)
    # whatever the key's length, and a SAS URL's signature (sig=, URL-encoded base64)
    re.compile(r"\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{16,}={0,2})"),
    re.compile(r"[?&;]sig=([A-Za-z0-9%+/]{16,}(?:=|%3D){0,2})", re.I),
    # .netrc, on one line or several: machine HOST [login USER] [account A] password SECRET
    re.compile(r"\b(?:machine\s+\S+|default(?=\s+(?:login|account)\s))(?:\s+(?:login|account)\s+\S+)*\s+password\s+(\S+)"),
    # user:password given to curl (-u / --user) and Authorization: Basic base64(user:password)
    re.compile(r"\bcurl\b[^\n]*?\s(?:-u\s*|--user[ =])[\"']?[^\s:\"']*:([^\s\"']+)"),
    re.compile(r"\bAuthorization[\"']?\s*[:=]\s*[\"']?Basic\s+([A-Za-z0-9+/]{8,}={0,2})", re.I),
    # a password glued to -p (mysql, mysqldump, mysqladmin; -P is the port), and docker login -p
    re.compile(r"\bmysql(?:dump|admin|import|show|check)?\b[^\n]*?\s-p[\"']?([^\s\"']+)"),
    re.compile(r"\b(?:docker|podman|nerdctl)\s+login\b[^\n]*?\s-p[ =]?[\"']?([^\s\"']{4,})"),
    # a Twilio auth token (32 hex) after its account SID or named as one
    re.compile(r"\bAC[0-9a-f]{32}\b[\"']?[\s,:;]+[^\n]{0,20}?(?<![0-9a-f])([0-9a-f]{32})(?![0-9a-f])"),
    re.compile(r"\bauth[\s_-]?token\b[^\n]{0,20}?(?<![0-9A-Fa-f])([0-9a-f]{32})(?![0-9a-f])", re.I),
    # an AWS secret access key (40 base64 characters, mixed case and a digit) on a line that
    # names AWS or a secret key: in prose it has no KEY= before it
    re.compile(r"(?:\baws\b|\bsecret\b)[^\n]{0,80}?(?<![A-Za-z0-9/+=])"
               r"((?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])", re.I),
    # "the pg password is Tr0ub4dor&3": a password said in a sentence, when what follows looks
    # like one (a digit or a symbol in it: "the password is required" stays as written)
    re.compile(r"\b(?:password|passwd|passphrase|pwd)\b[^\n.;,]{0,30}?\s(?:is|was|=|:)\s+[\"'`]?"
               r"((?=[^\s\"'`]*[0-9!@#$%^&*+=~?-])[^\s\"'`]{5,}?)[\"'`]?(?=[\s.,;:!?)]*(?:\s|$))", re.I),
]
# a private key block (PEM, OpenSSH, PGP's "PRIVATE KEY BLOCK"): all of it
_PEM = re.compile(r"(-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----)[\s\S]*?(-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----)")
# one whose END line was cut off: its BEGIN line, then the base64 lines that follow
_PEM_CUT = re.compile(r"(-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----)(?:\s+[A-Za-z0-9+/=:-]{16,}|\s+[A-Za-z-]+: [^\n]*)+")

_known: dict[str, str] = {}  # secret value -> kind, of the secrets clawmem was given
_known_lock = _thread.allocate_lock()


def mask(value: str, kind: str) -> str:
    """`[kind …last4]`, or just `[kind]` for a short secret."""
    return f"[{kind} …{value[-4:]}]" if len(value) >= MIN_TAIL else f"[{kind}]"


def remember(value: str | None, kind: str) -> None:
    """A secret clawmem was given (an API key, a credential header): masked wherever it shows up."""
    if value and len(value) >= 6:
        with _known_lock:
            _known[value] = kind


@lru_cache(maxsize=1)
def _detect_secrets_patterns() -> tuple[tuple[str, re.Pattern], ...]:
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:  # not installed: the built-in shapes still apply
        return ()
    out = []
    for kind, plugin in get_mapping_from_secret_type_to_class().items():
        if issubclass(plugin, RegexBasedDetector) and plugin.__name__ not in SKIPPED_PLUGINS:
            out += [(kind, rx) for rx in plugin.denylist]
    return tuple(out)


# What any match of a detect-secrets pattern holds (detect-secrets 1.x): a run of 24 or more
# token characters, or of 11 or more with a digit or a capital letter (its case-sensitive
# patterns start with capitals or digits: AKIA…, AP…, SG., T3Blbk…), or one of these literal
# shapes (a URL's user:pass@, Slack's xox…, a JWT's eyJ…, npm's _authToken). \w: their \d
# is any script's digit. tests/test_redaction.py checks it against every pattern's strings.
_TOKEN_RUN = re.compile(r"[\w+/=\\-]{11,}")
_TOKEN_SHAPES = ("://", "xox", "eyj", "_authtoken")


def may_hold_token(text: str) -> bool:
    """Whether a detect-secrets pattern could match `text`; False lets a short line of words
    skip loading them (the index job's log line: "index: 3 files, 3 chunks; keyword-only")."""
    low = text.lower()
    if any(shape in low for shape in _TOKEN_SHAPES):
        return True
    return any(len(run) >= 24 or run.lower() != run or any(c.isdigit() for c in run) for run in _TOKEN_RUN.findall(text))


def _secret_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret found. A pattern that captures the secret after a
    name (`aws_secret = "…"`, `://user:…@`) marks that group only; a group that starts the
    match is the token's prefix (`(glpat|gldt)-…`), and then the whole match is the secret."""
    spans = []
    found_by_them = _detect_secrets_patterns() if may_hold_token(text) else ()
    patterns = [*found_by_them, *_EXTRA_TOKENS, *(("Secret", rx) for rx in _ASSIGNMENTS)]
    for kind, rx in patterns:
        for m in rx.finditer(text):
            inner = [i for i in range(1, rx.groups + 1) if m.group(i) and m.start(i) > m.start()]
            if inner:
                spans += [(m.start(i), m.end(i), kind) for i in inner]
            elif m.end() > m.start():
                spans.append((m.start(), m.end(), kind))
    with _known_lock:
        known = list(_known.items())
    for value, kind in known:
        start = 0
        while (pos := text.find(value, start)) >= 0:
            spans.append((pos, pos + len(value), kind))
            start = pos + len(value)
    return spans


def redact(text: str) -> str:
    """`text` with every secret found masked (see the module's docstring)."""
    return redact_counted(text)[0]


def redact_counted(text: str) -> tuple[str, list[str]]:
    """redact(), and the kinds of the secrets it masked (one per secret), for a reply that
    says what a write did to the text it was given."""
    kinds: list[str] = []

    def pem(m: re.Match, note: str) -> str:
        kinds.append("Private Key")
        return f"{m.group(1)} {note}" + (f" {m.group(2)}" if m.re is _PEM else "")

    text = _PEM.sub(lambda m: pem(m, "…redacted…"), text)
    text = _PEM_CUT.sub(lambda m: pem(m, "…redacted (its END line is missing)…"), text)
    spans = _secret_spans(text)
    if not spans:
        return text, kinds
    # overlapping finds: the widest wins, so a key inside a KEY=value is masked once
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    out, pos = [], 0
    for start, end, kind in spans:
        if start < pos:
            continue
        out += [text[pos:start], mask(text[start:end], kind)]
        kinds.append(kind)
        pos = end
    out.append(text[pos:])
    return "".join(out), kinds


def mask_password(url: str) -> str:
    """The URL with its password replaced by ***, the server and user still readable (a
    fleet URL in messages and logs)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


def mask_url(url: str) -> str:
    """`url` without the credentials it carries: user:password and secret-looking query values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(SECRET_NAME.search(k) for k, _ in pairs):  # else left exactly as written
        query = urlencode([(k, "***" if SECRET_NAME.search(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The credentials in a URL (for scrubbing messages that quote it)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [p for p in (parts.username, parts.password) if p]
    found += [v for k, v in parse_qsl(parts.query) if SECRET_NAME.search(k) and v]
    return found
