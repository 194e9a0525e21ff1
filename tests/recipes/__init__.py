"""Extensions written by following ARCHITECTURE.md's recipes literally, for the tests that hold the recipes true."""
