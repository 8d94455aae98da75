"""Reference copies of policies before their incremental rankings (issue 18)."""
