"""``check_ledger`` checks the organization tree: paths follow parents, and parents never
form a cycle (what two crossing moves used to leave behind)."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from organizations.integrity import tree_problems
from organizations.models import Organization
from tests.organizations.helpers import organization


def test_a_sound_tree_has_no_problems(api):
    t = organization(api, "T")
    organization(api, "X", organization(api, "P", t))
    assert tree_problems() == []


def test_check_ledger_reports_a_cycle_of_parents(api):
    t = organization(api, "T")
    x, y = organization(api, "X", t), organization(api, "Y", t)
    Organization.objects.filter(pk=x).update(parent_id=y)
    Organization.objects.filter(pk=y).update(parent_id=x)
    problems = tree_problems()
    assert any("cycle" in problem for problem in problems), problems
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("check_ledger", stdout=io.StringIO(), stderr=err)
    assert "cycle of parents" in err.getvalue()


def test_check_ledger_reports_a_path_that_disagrees_with_its_parent(api):
    t = organization(api, "T")
    x = organization(api, "X", organization(api, "P", t))
    Organization.objects.filter(pk=x).update(path=f"/{x.replace('-', '')}/")
    assert any("does not follow its parent" in p for p in tree_problems())
