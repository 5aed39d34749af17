"""Friendlier command-line errors: the closest flag or choice for a typo, and numeric flags checked in words.

``GraphtxParser`` is the ``argparse.ArgumentParser`` of every ``graphtx`` (sub)command:

* an unknown option of a subcommand (``graphtx search --txet ...``) is reported before anything else
  (a missing required option included) with the closest known one: "unrecognized argument --txet;
  did you mean --text?" (Python 3.11's argparse suggests nothing; 3.14's only for choices);
* an invalid choice (a subcommand, ``--ranker``) gets the closest valid one appended;
* ``at_least(n)`` / ``positive_float`` / ``port`` are argument types whose errors name the flag's
  meaning, not a config key: ``-k 0`` -> "argument -k: k must be at least 1 (got 0)".

All of these exit 2 through ``argparse``, as every usage error of the command does.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Callable, Sequence


def closest(word: str, choices: Sequence[str]) -> str | None:
    """The known choice most like ``word`` (difflib ratio >= 0.6), None when nothing is close."""
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


class GraphtxParser(argparse.ArgumentParser):
    """ArgumentParser with closest-match suggestions for unknown options and invalid choices."""

    def error(self, message: str):  # noqa: D401 - argparse's hook; exits 2
        m = _INVALID_CHOICE.search(message)
        if m:
            choices = re.findall(r"'([^']*)'", m.group(2))
            near = closest(m.group(1), choices)
            if near:
                message += f"; did you mean '{near}'?"
        super().error(message)

    def parse_known_args(self, args=None, namespace=None):
        if args is not None and self._subparsers is None:  # a leaf (sub)command: check its options first
            self._check_options(list(args))
        return super().parse_known_args(args, namespace)

    def _check_options(self, args: list[str]) -> None:
        known = [s for s in self._option_string_actions if s.startswith("-")]
        for token in args:
            if token == "--":
                break
            if not token.startswith("-") or token == "-" or _is_number(token):
                continue
            name = token.split("=", 1)[0]
            if name in self._option_string_actions:
                continue
            if (
                name.startswith("--")
                and self.allow_abbrev
                and any(s.startswith(name) for s in known if s.startswith("--"))
            ):
                continue  # an abbreviation argparse resolves (or reports as ambiguous)
            if not name.startswith("--") and name[:2] in self._option_string_actions:
                continue  # a short option with its value attached: -k5
            near = closest(name, [s for s in known if s.startswith("--") or len(name) <= 3])
            hint = f"; did you mean {near}?" if near else f" (see {self.prog} --help)"
            self.error(f"unrecognized argument {name}{hint}")


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


# --- numeric argument types -----------------------------------------------------------


def at_least(low: int, what: str | None = None) -> Callable[[str], int]:
    """An ``int`` argument type refusing values below ``low`` in words ("k must be at least 1 (got 0)").

    ``what`` names the value in the message; argparse prefixes the flag ("argument -k: ...").
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what or 'the value'} must be a whole number (got {text!r})") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{what or 'the value'} must be at least {low} (got {value})")
        return value

    parse.__name__ = f"at_least_{low}"
    return parse


def at_least_or(word: str, low: int, what: str | None = None) -> Callable[[str], int | str]:
    """``at_least(low, what)``, or the one ``word`` itself (``--steps all``)."""
    number = at_least(low, what)

    def parse(text: str) -> int | str:
        if text.strip().lower() == word:
            return word
        try:
            return number(text)
        except argparse.ArgumentTypeError as refused:
            raise argparse.ArgumentTypeError(f"{refused}, or {word!r}") from None

    parse.__name__ = f"at_least_{low}_or_{word}"
    return parse


def positive_float(what: str | None = None) -> Callable[[str], float]:
    """A ``float`` argument type refusing zero, negative and non-finite values in words."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what or 'the value'} must be a number (got {text!r})") from None
        if not value > 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{what or 'the value'} must be a positive number (got {text})")
        return value

    parse.__name__ = "positive_float"
    return parse


def share(text: str) -> float:
    """A share in [0, 1): ``--valid-share 0.2``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the share must be a number in [0, 1) (got {text!r})") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"the share must be in [0, 1) (got {text})")
    return value


def share_above_zero(text: str) -> float:
    """A share in (0, 1]: ``--max-shared-text 0.5``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the share must be a number in (0, 1] (got {text!r})") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"the share must be in (0, 1] (got {text})")
    return value


def port(text: str) -> int:
    """A TCP port, 0 (any free port) to 65535."""
    value = at_least(0, "the port")(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"the port must be at most 65535 (got {value})")
    return value
