"""``GET .../journal``: a ledger's sealed blocks, oldest first, keyset-paged."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from journal.selectors import blocks
from journal.serializers import BlockOut, block_data
from ledgerproject.api.pagination import KeysetPage
from ledgerproject.api.schema import COMMON_ERRORS, error_responses, limit_parameter
from ledgerproject.api.views import ScopedAPIView


class JournalBlocks(ScopedAPIView):
    """The ledger's journal: its blocks in order, each with its entries' Merkle root and the
    previous block's hash. Keep the newest block's ``hash``: every proof of an entry in it or
    before it checks against it (docs/BOOKS.md)."""

    @extend_schema(
        summary="List the journal's blocks",
        parameters=[limit_parameter()],
        responses={200: BlockOut(many=True), **error_responses(*COMMON_ERRORS)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = KeysetPage(request, keys=("height", "id"))
        rows = page.slice(blocks(self.organization.pk, self.ledger.pk))
        return page.response([block_data(b) for b in rows])
