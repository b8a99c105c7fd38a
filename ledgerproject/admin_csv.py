"""CSV export of an admin list, streamed: the rows the list shows (its filters, search and
order), written as they are read, so an export of a million rows holds one chunk in memory.

A ``ModelAdmin`` lists its columns in ``csv_columns`` (header, function of the row); the list
page gets an "Export CSV" button that carries its query string to ``.../export.csv``. Money is
written as a decimal (``25.00``) beside its asset code, so a spreadsheet reads it as a number.
A cell that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab or carriage
return first) is prefixed with ``'``, except account aliases or a plain number, which no
spreadsheet runs."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, StreamingHttpResponse
from django.urls import path
from django.utils import timezone

CHUNK = 2000
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
ALIAS = r"@[A-Za-z0-9_\-/.]{1,100}"
HARMLESS = re.compile(rf"{ALIAS}( {ALIAS})*|-?[0-9]+(\.[0-9]+)?")

Column = tuple[str, Callable[[Any], Any]]


def cell(value: Any) -> str:
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_START) and not HARMLESS.fullmatch(text):
        return "'" + text
    return text


class _Echo:
    def write(self, value: str) -> str:
        return value


class CsvExportMixin(admin.ModelAdmin):
    csv_columns: tuple[Column, ...] = ()
    change_list_template = "admin/csv_change_list.html"

    def get_urls(self) -> list[Any]:
        info = self.opts.app_label, self.opts.model_name
        export = path(
            "export.csv",
            self.admin_site.admin_view(self.export_csv),
            name="{}_{}_export".format(*info),
        )
        return [export, *super().get_urls()]

    def export_csv(self, request: HttpRequest) -> StreamingHttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        changelist = self.get_changelist_instance(request)
        rows = changelist.get_queryset(request).iterator(chunk_size=CHUNK)
        writer = csv.writer(_Echo())

        def lines() -> Iterator[str]:
            yield writer.writerow([header for header, _ in self.csv_columns])
            for row in rows:
                yield writer.writerow([cell(value(row)) for _, value in self.csv_columns])

        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        name = f"{self.opts.model_name}s-{stamp}.csv"
        response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


def csv_response(rows: Iterable[list[Any]], name: str) -> StreamingHttpResponse:
    """Rows (a report's, the header first; a generator streams) as a CSV download named
    ``name``."""
    writer = csv.writer(_Echo())
    lines = (writer.writerow([cell(value) for value in row]) for row in rows)
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
