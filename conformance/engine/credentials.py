"""Credentials out of everything the tool shows or records: one rule.

A store URL (``redis://user:PW@host:port/0``, ``redis://host/0?password=PW``)
is typed on command lines, so it reaches the terminal, ``header.json``
(``command``), ``report.html``, the run folder's ``.lock``, ``findings.json``
and ``replay.json`` (the store's location) and error messages. Each of those
goes through :func:`mask_url`, :func:`mask_arg` or :func:`mask_command` (or
:func:`mask_text` for free text), which show every credential as ``***``:

- the user and the password of a URL's authority (``user:PW@`` becomes
  ``***:***@``, ``:PW@`` becomes ``:***@``);
- the value of every query key that names a secret (``password``,
  ``username``, ``ssl_password``, any key with ``pass``, ``pwd``, ``user``,
  ``secret``, ``token``, ``auth`` or ``cred`` in it), its name read as the
  Redis client reads it (percent-decoded: ``p%61ssword`` is ``password``).

The rule errs on the side of hiding: a URL that does not parse (a port that is
not a number, a password holding ``/``, ``?`` or ``@``) is masked by the text
around ``://`` and the last ``@``, never shown as it was because it failed to
parse; so a query holding ``@`` may hide the host as well. Imports nothing of
ours: every layer may use it (the engine writes header.json and .lock).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote_plus

MASK = "***"
# Words that make a query key a secret (lower case, after percent-decoding).
SECRET_WORDS = ("pass", "pwd", "user", "secret", "token", "auth", "cred")

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# A query pair: after ?, & or ; (the client splits on &; ; is hidden too, to err
# on the side of hiding), a key up to =, a value up to the next separator.
_PAIR = re.compile(r"(?<=[?&;])([^=&;#?]*)=([^&;#]*)")
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*")


def is_secret_key(key: str) -> bool:
    """Whether a URL query key names a credential (as the client decodes it)."""
    name = unquote_plus(key).strip().lower()
    return any(word in name for word in SECRET_WORDS)


def mask_url(url: str) -> str:
    """``url`` with its credentials shown as ``***`` (the module docstring
    says which). Text without ``scheme://`` comes back unchanged."""
    url = str(url)
    scheme = _SCHEME.match(url)
    if scheme is None:
        return url
    start = scheme.end()
    hidden = [False] * len(url)
    # The authority's user and password: up to the last @ (a password may hold
    # / ? # or @, which end the authority for a parser but not for this rule).
    at = url.rfind("@", start)
    if at != -1:
        colon = url.find(":", start, at)
        user_end = at if colon == -1 else colon
        for index in range(start, user_end):
            hidden[index] = True
        if colon != -1:
            for index in range(colon + 1, at):
                hidden[index] = True
    for pair in _PAIR.finditer(url, start):
        if is_secret_key(pair.group(1)):
            for index in range(pair.start(2), pair.end(2)):
                hidden[index] = True
    out, index = [], 0
    while index < len(url):
        if hidden[index]:
            while index < len(url) and hidden[index]:
                index += 1
            out.append(MASK)
        else:
            out.append(url[index])
            index += 1
    return "".join(out)


def mask_arg(arg: str) -> str:
    """One command-line argument with the credentials of the URL in it
    masked: the URL runs from its ``scheme://`` to the argument's end
    (``--store=redis://:PW@host/0``; a password may hold spaces)."""
    arg = str(arg)
    found = _SCHEME.search(arg)
    if found is None:
        return arg
    return arg[: found.start()] + mask_url(arg[found.start() :])


def mask_command(argv: Iterable[str]) -> list[str]:
    """A command line (``sys.argv``) as it may be recorded or shown."""
    return [mask_arg(arg) for arg in argv]


def mask_text(text: str) -> str:
    """Free text (a message) with the credentials of every URL in it masked,
    each URL running to the next white space (but for the punctuation that
    ends it)."""

    def masked(found: re.Match) -> str:
        # The punctuation a message puts after a URL ("URL: reason") stays shown.
        url = found.group()
        core = url.rstrip(":,;.)")
        return mask_url(core) + url[len(core) :]

    return _URL_IN_TEXT.sub(masked, str(text))
