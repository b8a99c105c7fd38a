"""Staff admin for transaction templates: edited as text, checked by the same compiler as the
API (errors with line and column on the form), saved through the same services, and shown in
the formatter's canonical layout."""

from __future__ import annotations

import uuid
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, JsonResponse
from django.urls import path, reverse
from django.utils.html import format_html

from ledgerproject.admin_base import LedgerModelAdmin
from ledgerproject.errors import LedgerError
from organizations.admin import DeletedFilter, admin_url, scope_filter
from organizations.models import Ledger
from templates_dsl import services
from templates_dsl.compile import compile_template
from templates_dsl.errors import TemplateError
from templates_dsl.examples import examples
from templates_dsl.formatter import format_template
from templates_dsl.limits import MAX_TEMPLATE_BYTES
from templates_dsl.models import TransactionTemplate


class TemplateEditor(forms.Textarea):
    """A textarea with line numbers beside it and the failing line marked (``error_line``),
    by a small script and stylesheet shipped in ``static/templates_dsl`` (no CDN). As staff
    type, the script asks the page's ``check/`` view about the text (``data-check-url``) and
    shows the answer; a new template may start from an example (``examples``)."""

    template_name = "templates_dsl/editor.html"
    error_line: int | None = None
    examples: dict[str, str] | None = None

    class Media:
        css = {"all": ("templates_dsl/editor.css",)}
        js = ("templates_dsl/editor.js",)

    def get_context(self, name: str, value: Any, attrs: Any) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        context["widget"]["error_line"] = self.error_line
        context["widget"]["examples"] = self.examples
        return context


class TemplateForm(forms.ModelForm):
    text = forms.CharField(
        widget=TemplateEditor(
            attrs={"rows": 24, "cols": 100, "wrap": "off", "spellcheck": "false"}
        ),
        help_text="Template text. Errors name the line and column, and the line is marked.",
    )

    class Meta:
        model = TransactionTemplate
        fields = ("ledger", "text")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        editor = cast(TemplateEditor, self.fields["text"].widget)
        editor.attrs["data-check-url"] = reverse("admin:templates_dsl_transactiontemplate_check")
        if "ledger" in self.fields:  # a new template: it may start from an example
            editor.examples = examples()
        else:
            editor.attrs["data-ledger"] = str(self.instance.ledger_id)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        ledger: Ledger | None = data.get("ledger") or getattr(self.instance, "ledger", None)
        text = data.get("text")
        if ledger is None or not text:
            return data
        try:
            compiled = services.template_compile_for(ledger=ledger, text=text)
        except LedgerError as exc:
            if isinstance(exc, TemplateError):
                cast(TemplateEditor, self.fields["text"].widget).error_line = exc.line
            raise forms.ValidationError({"text": f"{exc.error.code}: {exc.description}"}) from exc
        stored = TransactionTemplate.objects.filter(pk=self.instance.pk).exists()
        if stored and compiled.code != self.instance.code:
            raise forms.ValidationError(
                {"text": f"The code cannot change (this template is {self.instance.code})."}
            )
        return data


@admin.register(TransactionTemplate)
class TransactionTemplateAdmin(LedgerModelAdmin):
    form = TemplateForm
    list_display = ("code", "ledger", "asset_code", "pending", "created_at", "deleted_at")
    list_filter = (scope_filter("ledger", Ledger), DeletedFilter, "pending", "asset_code")
    search_fields = ("code", "description", "=ledger__id")
    list_select_related = ("ledger",)
    autocomplete_fields = ("ledger",)
    readonly_fields = (
        "code",
        "variables",
        "canonical_text",
        "created_at",
        "updated_at",
        "deleted_at",
    )
    actions = ("deactivate",)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ("ledger", "text")
        return (
            "code",
            "variables",
            "text",
            "canonical_text",
            "created_at",
            "updated_at",
            "deleted_at",
        )

    def get_urls(self) -> list[Any]:
        check = path(
            "check/",
            self.admin_site.admin_view(self.check_text),
            name="templates_dsl_transactiontemplate_check",
        )
        return [check, *super().get_urls()]

    def check_text(self, request: HttpRequest) -> JsonResponse:
        """What the compiler says of a text as staff type it (``TemplateEditor``): its code
        and variables, or the error with its line; against a ledger's instruments when one
        is named. Nothing is saved."""
        if request.method != "POST":
            return JsonResponse({"error": "POST the text."}, status=405)
        if not (self.has_add_permission(request) or self.has_change_permission(request)):
            raise PermissionDenied
        text = request.POST.get("text", "")
        if len(text.encode()) > MAX_TEMPLATE_BYTES:
            return JsonResponse({"ok": False, "error": "The text is too long.", "line": None})
        named = request.POST.get("ledger", "")
        ledger = _ledger_named(named)
        if named and ledger is None:
            return JsonResponse(
                {"ok": False, "error": "No active ledger has this id.", "line": None}
            )
        try:
            if ledger is None:
                compiled = compile_template(text)
            else:
                compiled = services.template_compile_for(ledger=ledger, text=text)
        except TemplateError as exc:
            return JsonResponse({"ok": False, "error": f"{exc.error.code}: {exc.description}",
                                 "line": exc.line})  # fmt: skip
        except LedgerError as exc:
            return JsonResponse({"ok": False, "error": f"{exc.error.code}: {exc.description}",
                                 "line": None})  # fmt: skip
        variables = [f"${n} (amount)" for n in compiled.amount_variables()]
        variables += [f"${n} (account)" for n in compiled.account_variables()]
        checked = "" if ledger is not None else " (choose the ledger to check its asset)"
        named = ", ".join(variables) or "none"
        message = f"{compiled.code}: valid{checked}; variables {named}."
        return JsonResponse({"ok": True, "line": None, "message": message})

    @admin.display(description="Canonical text")
    def canonical_text(self, obj: TransactionTemplate) -> str:
        try:
            text = format_template(compile_template(obj.text))
        except LedgerError as exc:
            text = exc.description
        return format_html("<pre style='font-size: 12px'>{}</pre>", text)

    @admin.display(description="Variables")
    def variables(self, obj: TransactionTemplate) -> str:
        try:
            compiled = compile_template(obj.text)
        except LedgerError:
            return "-"
        names = [f"${name} (amount)" for name in compiled.amount_variables()]
        names += [f"${name} (account)" for name in compiled.account_variables()]
        if obj.deleted_at is not None:
            return ", ".join(names) or "none"
        post = admin_url(Ledger, "post", obj.ledger_id, template=obj.code)
        return format_html(
            '{} — <a href="{}">post a transaction with it</a>', ", ".join(names) or "none", post
        )

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        text = form.cleaned_data["text"]
        try:
            if change:
                current = TransactionTemplate.objects.get(pk=obj.pk)
                saved = services.template_replace(template=current, text=text)
            else:
                saved = services.template_create(ledger=form.cleaned_data["ledger"], text=text)
        except LedgerError as exc:
            messages.error(request, exc.description)
            return
        obj.pk = saved.pk
        obj.__dict__.update({k: v for k, v in saved.__dict__.items() if not k.startswith("_")})

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(
        description="Deactivate (soft-delete) the selected templates", permissions=["deactivate"]
    )
    def deactivate(self, request: HttpRequest, queryset: QuerySet[TransactionTemplate]) -> None:
        count = 0
        for template in queryset.filter(deleted_at__isnull=True):
            services.template_delete(template=template)
            count += 1
        messages.success(request, f"Deactivated {count} template(s).")


def _ledger_named(value: str) -> Ledger | None:
    try:
        pk = uuid.UUID(value)
    except ValueError:
        return None
    return Ledger.objects.filter(pk=pk, deleted_at__isnull=True).first()
