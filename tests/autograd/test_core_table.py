"""The tables the autograd core owns (reference.autograd.table, docs/architecture.md): importing
``reference`` fills them, each function from the module :data:`NEEDED` names, and a wrong
registration is refused."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import reference
from reference.autograd import table
from reference.ops.rules import registry


def test_importing_reference_registers_every_function_the_core_needs():
    assert table.missing() == []
    for name, home in table.NEEDED.items():
        module = importlib.import_module(home)
        registered = getattr(table.ops, name)
        # the function of its home module (by its own name there, or the one the home exports)
        assert registered is getattr(module, name, None) or registered.__module__ == home, (name, home)


def test_the_derivative_table_is_the_cores():
    assert registry.RULES is table.RULES
    assert table.RULES["add"].name == "add" and len(table.RULES) > 100
    assert reference.ops.RULES is table.RULES


def test_a_name_the_core_does_not_need_is_refused():
    with pytest.raises(ValueError, match="'frobnicate' is not one of the names the core needs"):
        table.register(frobnicate=len)


def test_a_second_registration_is_refused():
    with pytest.raises(ValueError, match="'clone' is registered twice"):
        table.register(clone=len)
    assert table.ops.clone is reference.ops.api.clone


def test_reading_an_unregistered_function_names_its_home():
    # a fresh interpreter that imports the core alone (as a layer above would, before registering)
    code = (
        "import sys, types\n"
        "sys.modules['reference'] = types.ModuleType('reference')\n"  # skip reference/__init__
        "sys.modules['reference'].__path__ = ['reference']\n"
        "from reference.autograd import table\n"
        "try:\n"
        "    table.ops.sum_to\n"
        "except RuntimeError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "table.ops.sum_to is not registered: reference.ops.api registers it" in out
