"""Template text uploaded as ``multipart/form-data`` (``curl -F dsl=@payment.tmpl``), as Midaz
clients send it to ``POST .../transactions/dsl``: the file part is the text, not the MIME
envelope around it. Bodies are built as a client builds them and sent through the API."""

from __future__ import annotations

import pytest

from tests.conftest import assert_error
from tests.transactions.conftest import Book, make_book

TEXT = """(transaction-template v1
  (chart-of-accounts-group-name PIX)
  (code PIX_OUT)
  (description "Uploaded payment")
  (send BRL 150|2 (source (from @alice :amount BRL 150|2)))
  (distribute (to @bob :amount BRL 150|2)))
"""
BOUNDARY = "------------------------d74496d66958873e"


def multipart(*parts: tuple[str, str | None, str]) -> bytes:
    """A multipart/form-data body as curl -F writes it: (name, filename or None, content)."""
    out = []
    for name, filename, content in parts:
        disposition = f'form-data; name="{name}"'
        if filename is not None:
            disposition += f'; filename="{filename}"'
        kind = "Content-Type: application/octet-stream\r\n" if filename else ""
        out.append(f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n{kind}\r\n{content}\r\n")
    return ("".join(out) + f"--{BOUNDARY}--\r\n").encode()


@pytest.fixture
def funded(api, ledger_url) -> Book:
    book = make_book(api, ledger_url)
    book.fund("@alice", 1_000)
    return book


def upload(book: Book, body: bytes, path: str = "transactions/dsl", **extra):
    return book.api.client.post(
        f"{book.url}/{path}",
        body,
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
        **extra,
    )


def test_it_posts_the_file_part_of_an_upload(funded):
    response = upload(funded, multipart(("dsl", "payment.gold", TEXT)))
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["inline"], body["status"], body["description"]) == (
        True,
        "SENT",
        "Uploaded payment",
    )
    assert (funded.available("@alice"), funded.available("@bob")) == (850, 150)


def test_the_file_part_may_have_any_name(funded):
    response = upload(funded, multipart(("file", "t.gold", TEXT)))
    assert response.status_code == 201, response.content


def test_a_field_named_dsl_is_the_text_too(funded):
    response = upload(funded, multipart(("dsl", None, TEXT)))
    assert response.status_code == 201, response.content


def test_the_test_client_upload_works_as_curl_does(funded):
    from django.core.files.uploadedfile import SimpleUploadedFile

    file = SimpleUploadedFile("t.gold", TEXT.encode(), content_type="text/plain")
    response = funded.api.client.post(f"{funded.url}/transactions/dsl", {"dsl": file})
    assert response.status_code == 201, response.content


def test_an_upload_is_idempotent_like_the_text(funded):
    first = upload(funded, multipart(("dsl", "t.gold", TEXT)), HTTP_IDEMPOTENCY_KEY="up-1")
    again = upload(funded, multipart(("dsl", "t.gold", TEXT)), HTTP_IDEMPOTENCY_KEY="up-1")
    assert (first.status_code, again.status_code) == (201, 201)
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert funded.available("@bob") == 150


def test_errors_in_the_uploaded_text_name_its_own_lines(funded):
    broken = TEXT.replace("(send BRL 150|2", "(send BRL 150|2 )")
    body = assert_error(upload(funded, multipart(("dsl", "t.gold", broken))), 400, "0017")
    assert body["description"].startswith("line 5, column"), body


def test_it_refuses_uploads_it_cannot_read_as_one_template(funded):
    assert_error(upload(funded, multipart(("dsl", "t.gold", "  "))), 400, "0049")
    assert_error(upload(funded, multipart(("note", None, "hello"))), 400, "0009")
    two_files = multipart(("a", "a.gold", TEXT), ("b", "b.gold", TEXT))
    assert_error(upload(funded, two_files), 400, "0047")
    extra = assert_error(
        upload(funded, multipart(("dsl", "t.gold", TEXT), ("x", None, "1"))), 400, "0053"
    )
    assert extra["fields"] == {"x": "unexpected part"}
    no_boundary = funded.api.client.post(
        f"{funded.url}/transactions/dsl", b"junk", content_type="multipart/form-data"
    )
    assert_error(no_boundary, 400, "0047")
    assert funded.available("@bob") == 0


def test_a_template_is_stored_from_an_upload_too(funded):
    text = TEXT.replace("PIX_OUT", "UPLOADED")
    response = upload(funded, multipart(("dsl", "t.gold", text)), path="transaction-templates")
    assert response.status_code == 201, response.content
    assert response.content.decode() == text
    replaced = text.replace("Uploaded payment", "Replaced")
    put = funded.api.client.put(
        f"{funded.url}/transaction-templates/UPLOADED",
        multipart(("dsl", "t.gold", replaced)),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
    assert put.status_code == 200, put.content
    assert (
        funded.api.get(f"{funded.url}/transaction-templates/UPLOADED").content.decode() == replaced
    )
