"""The ``asrpt`` command line: one module per command, discovered from this package.

Each module ``asrpt/cli/<name>.py`` defines ``register(subparsers)``, which adds its sub-parser
(with a documented ``--help``) and sets ``func`` to a function ``(args) -> int`` (the exit status).
Adding a command is one new file; nothing here names commands. The module of a command is its
name with ``-`` as ``_`` (``worst-case`` is ``worst_case.py``); :func:`main` imports only the module
of the command it runs (and none for ``--version``), so a command pays only for what it uses.

Exit statuses, the same for every command:

- 0: success;
- 1: the command ran and its answer is negative (``validate`` found problems, a certificate failed);
- 2: bad input (missing file, invalid JSON or instance, bad option, infeasible job): one line on
  stderr, ``asrpt <command>: error: <what>: <why>``, never a traceback;
- 3: an internal error (a bug): one line on stderr; ``ASRPT_DEBUG=1`` shows the traceback.

Nothing in asrpt imports this package.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import pkgutil
import sys
import traceback
from typing import Sequence

from ..errors import AsrptError

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line and exit 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


def _command_modules() -> list[str]:
    here = os.path.dirname(__file__)
    return sorted(m.name for m in pkgutil.iter_modules([here])
                  if not m.name.startswith("_") and not m.ispkg)


def _command_for(argv: Sequence[str]) -> list[str] | None:
    """The command modules ``argv`` needs: one for a known command, none for ``--version``, or
    ``None`` (all of them) for help, errors and anything unrecognised.

    >>> _command_for(["worst-case", "--help"]), _command_for(["--version"]), _command_for(["-h"])
    (['worst_case'], [], None)
    """
    for token in argv:
        if token == "--version":
            return []
        if token.startswith("-"):
            return None  # -h / --help or a bad option: the full parser answers
        module = token.replace("-", "_")
        return [module] if module in _command_modules() else None
    return None


def build_parser(commands: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser with ``commands`` (module names; default: every command) registered.

    >>> "validate" in build_parser(["validate"])._subparsers._group_actions[0].choices
    True
    """
    from .. import __version__

    parser = _Parser(
        prog="asrpt",
        description="Online scheduling of distributed DL training jobs: A-SRPT, single-machine "
                    "theory, offline optima and bounds, placement and cluster simulation.",
    )
    parser.add_argument("--version", action="version", version=f"asrpt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _command_modules() if commands is None else commands:
        module = importlib.import_module(f"{__name__}.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every ``--option`` of ``parser`` and of its sub-parsers, recursively."""
    out: set[str] = set()
    for action in parser._actions:
        out.update(o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out |= _option_strings(sub)
    return out


def unknown_flag_hint(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """The first ``--flag`` in ``argv`` that the command it names does not know, with the closest
    known one (``--n_jobs`` -> ``--n-jobs``), as an error message; None where every flag is known
    or none is close (argparse then says what it says).

    >>> unknown_flag_hint(build_parser(["simulate"]), ["simulate", "x.json", "--polcy", "fifo"])
    'unrecognized argument --polcy: did you mean --policy?'
    """
    command = next((t for t in argv if not t.startswith("-")), None)
    subs = parser._subparsers._group_actions[0].choices if parser._subparsers is not None else {}
    if command not in subs:
        return None
    known = _option_strings(subs[command]) | {"--help", "--version"}
    for token in argv:
        if token == "--":
            break
        name = token.split("=", 1)[0]
        if not name.startswith("--") or name in known:
            continue
        close = difflib.get_close_matches(name.replace("_", "-"), sorted(known), n=1, cutoff=0.6)
        if close:
            return f"unrecognized argument {name}: did you mean {close[0]}?"
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status (also used by the console script)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_for(argv))
    hint = unknown_flag_hint(parser, argv)
    if hint is not None:
        command = next(t for t in argv if not t.startswith("-"))
        print(f"asrpt {command}: error: {hint}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    prog = f"asrpt {args.command}"
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a full disk or closed stdout fails here, inside the mapping below
        return status
    except AsrptError as exc:
        print(f"{prog}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the environment, not a bug: a bad output path, a full disk
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"{prog}: error: {where}{exc.strerror or _one_line(str(exc))}", file=sys.stderr)
        _discard_stdout()
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: one line, traceback on request
        if os.environ.get("ASRPT_DEBUG"):
            traceback.print_exc()
        print(f"{prog}: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
              "(set ASRPT_DEBUG=1 for the traceback)", file=sys.stderr)
        return 3


def _discard_stdout() -> None:
    """Point the process's stdout at /dev/null, so that the interpreter's final flush of what is
    still buffered cannot fail again (only when stdout is the process's own, not a redirection
    inside a caller)."""
    if sys.stdout is not sys.__stdout__:
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)
    except (OSError, ValueError):
        pass


def _one_line(text: str) -> str:
    return " ".join(text.split())
