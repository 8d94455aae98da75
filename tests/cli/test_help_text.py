"""What a terminal reader sees: every command's help and every ``--list-*`` listing is plain text
(no reStructuredText literals, roles or pointers to a module docstring, issue 46), and
``batch --list-tasks`` lines up its columns."""

import re

import pytest

from asrpt.cli import _command_modules, main

MARKUP = re.compile(r"``|:(?:func|class|meth|mod|data|attr|exc|obj):`|module docstring")
COMMANDS = [m.replace("_", "-") for m in _command_modules()]


def _output(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as exc:   # (--help exits)
        code = exc.code
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_markup(capsys, command):
    text = _output(capsys, [command, "--help"])
    assert not MARKUP.search(text), MARKUP.search(text).group(0)


@pytest.mark.parametrize("family", ["uniform", "philly", "recurring"])
def test_generator_option_help_has_no_markup(capsys, family):
    assert not MARKUP.search(_output(capsys, ["generate", family, "--help"]))


@pytest.mark.parametrize("flag", ["--list-policies", "--list-predictors", "--list-placers"])
def test_listings_have_no_markup(capsys, flag):
    text = _output(capsys, ["simulate", flag])
    assert text.strip() and not MARKUP.search(text)


def test_list_tasks_is_aligned(capsys):
    lines = _output(capsys, ["batch", "--list-tasks"]).splitlines()
    names, options = lines[0::2], lines[1::2]
    column = {len(line) - len(line.split(None, 1)[1]) for line in names}    # where each summary starts
    assert len(column) == 1 and {o.index("options:") for o in options} == column
