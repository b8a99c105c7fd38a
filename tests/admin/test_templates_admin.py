"""Template editing in the admin: the parser's messages with line and column on the form."""

from __future__ import annotations

import pytest

from templates_dsl.compile import compile_template
from templates_dsl.examples import examples
from templates_dsl.limits import MAX_TEMPLATE_BYTES
from templates_dsl.models import TransactionTemplate
from tests.admin.helpers import staff_client
from tests.api.test_templates import SIMPLE


@pytest.fixture
def staff(admin_client, api, ledger_url):
    api.post(f"{ledger_url}/instruments", {"name": "Real", "type": "currency", "code": "BRL"})
    return admin_client


def _ledger_id(ledger_url):
    return ledger_url.rsplit("/", 1)[-1]


def test_it_creates_a_template_from_the_form(staff, ledger_url):
    response = staff.post(
        "/admin/templates_dsl/transactiontemplate/add/",
        {"ledger": _ledger_id(ledger_url), "text": SIMPLE},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    template = TransactionTemplate.objects.get(code="SIMPLE")
    page = staff.get(f"/admin/templates_dsl/transactiontemplate/{template.pk}/change/")
    assert page.status_code == 200
    assert "Canonical text" in page.content.decode()


def test_it_shows_line_and_column_errors_on_the_form(staff, ledger_url):
    response = staff.post(
        "/admin/templates_dsl/transactiontemplate/add/",
        {"ledger": _ledger_id(ledger_url), "text": SIMPLE.replace("(code SIMPLE)", "(code")},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "0017: line 4, column 3: unexpected" in html
    assert not TransactionTemplate.objects.exists()


def test_the_editor_numbers_lines_and_marks_the_error_line(staff, ledger_url):
    page = staff.get("/admin/templates_dsl/transactiontemplate/add/").content.decode()
    assert '<div class="template-editor">' in page and 'class="template-editor-gutter"' in page
    assert "/static/templates_dsl/editor.js" in page and "/static/templates_dsl/editor.css" in page
    assert "data-error-line" not in page
    broken = SIMPLE.replace("(code SIMPLE)", "(code")
    response = staff.post(
        "/admin/templates_dsl/transactiontemplate/add/",
        {"ledger": _ledger_id(ledger_url), "text": broken},
    )
    html = response.content.decode()
    assert '<div class="template-editor" data-error-line="4">' in html
    assert "The error is on line 4." in html
    script = staff.get("/static/templates_dsl/editor.js")
    assert script.status_code == 200


def test_it_lists_templates(staff, ledger_url, django_assert_max_num_queries):
    staff.post(
        "/admin/templates_dsl/transactiontemplate/add/",
        {"ledger": _ledger_id(ledger_url), "text": SIMPLE},
    )
    with django_assert_max_num_queries(12):
        assert staff.get("/admin/templates_dsl/transactiontemplate/").status_code == 200


def test_it_shows_the_variables_and_links_to_the_posting_page(staff, ledger_url):
    staff.post(
        "/admin/templates_dsl/transactiontemplate/add/",
        {"ledger": _ledger_id(ledger_url), "text": SIMPLE},
    )
    template = TransactionTemplate.objects.get(code="SIMPLE")
    html = staff.get(f"/admin/templates_dsl/transactiontemplate/{template.pk}/change/")
    html = html.content.decode()
    assert "$a (amount), $to (account)" in html
    assert f"/admin/organizations/ledger/{_ledger_id(ledger_url)}/post/?template=SIMPLE" in html


def test_an_edit_with_an_error_shows_its_position_and_keeps_the_text(staff, ledger_url):
    staff.post(
        "/admin/templates_dsl/transactiontemplate/add/",
        {"ledger": _ledger_id(ledger_url), "text": SIMPLE},
    )
    template = TransactionTemplate.objects.get(code="SIMPLE")
    broken = SIMPLE.replace("$a|2 (source", "$a|99 (source")
    response = staff.post(
        f"/admin/templates_dsl/transactiontemplate/{template.pk}/change/", {"text": broken}
    )
    assert response.status_code == 200
    assert "0017: line 4, column" in response.content.decode()
    template.refresh_from_db()
    assert template.text == SIMPLE


def test_it_deactivates_templates(staff, ledger_url):
    staff.post(
        "/admin/templates_dsl/transactiontemplate/add/",
        {"ledger": _ledger_id(ledger_url), "text": SIMPLE},
    )
    template = TransactionTemplate.objects.get(code="SIMPLE")
    staff.post(
        "/admin/templates_dsl/transactiontemplate/",
        {"action": "deactivate", "_selected_action": [template.pk]},
    )
    template.refresh_from_db()
    assert template.deleted_at is not None


def test_the_check_view_says_what_the_compiler_says_as_staff_type(staff, ledger_url):
    check = "/admin/templates_dsl/transactiontemplate/check/"
    ledger = _ledger_id(ledger_url)
    good = staff.post(check, {"text": SIMPLE, "ledger": ledger}).json()
    assert good == {"ok": True, "line": None,
                    "message": "SIMPLE: valid; variables $a (amount), $to (account)."}  # fmt: skip
    broken = staff.post(check, {"text": SIMPLE.replace("(code SIMPLE)", "(code"), "ledger": ledger})
    assert broken.json()["ok"] is False and broken.json()["line"] == 4
    assert broken.json()["error"].startswith("0017: line 4")
    other_asset = SIMPLE.replace("BRL", "USD")
    said = staff.post(check, {"text": other_asset, "ledger": ledger}).json()
    assert said["ok"] is False and "USD does not exist in this ledger" in said["error"]
    unchecked = staff.post(check, {"text": other_asset, "ledger": ""}).json()
    assert unchecked["ok"] and "choose the ledger" in unchecked["message"]
    unknown = staff.post(check, {"text": SIMPLE, "ledger": "not-an-id"}).json()
    assert unknown == {"ok": False, "error": "No active ledger has this id.", "line": None}
    too_long = staff.post(check, {"text": "x" * (MAX_TEMPLATE_BYTES + 1)}).json()
    assert too_long == {"ok": False, "error": "The text is too long.", "line": None}
    assert staff.get(check).status_code == 405
    nobody = staff_client("templates_dsl.view_transactiontemplate")
    assert nobody.post(check, {"text": SIMPLE}).status_code == 403


def test_a_new_template_may_start_from_an_example_and_each_example_compiles(staff):
    page = staff.get("/admin/templates_dsl/transactiontemplate/add/").content.decode()
    for name, text in examples().items():
        assert f'<option value="{name}"' in page
        assert compile_template(text).code
    assert set(examples()) >= {"fund", "payment_with_fee", "payment_held", "split"}
