"""Text from a result (a reason, a case's description) made safe to paste into a generated script."""


def docstring_safe(text: str, limit: int = 400) -> str:
    """Text that cannot end or escape a docstring: ASCII, no backslash, no double quote."""
    text = str(text).strip()[:limit].encode("ascii", "backslashreplace").decode("ascii")
    text = "".join(c if c == "\n" or " " <= c <= "~" else "?" for c in text)  # no NUL, CR, other controls
    return text.replace("\\", "/").replace('"', "'")
