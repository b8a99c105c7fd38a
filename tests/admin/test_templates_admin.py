"""Template editing in the admin: the parser's messages with line and column on the form."""

from __future__ import annotations

import pytest

from templates_dsl.models import TransactionTemplate
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
