"""PDF text page by page with PDFium (pypdfium2): fast, and the text order a reader sees.

PDFium is C++; it only ever runs inside the worker process, whose CPU, memory and time
limits turn a hostile file's worst case into one clear error.
"""

from __future__ import annotations

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_raw

from mfconnector.documents.archive import corrupt, protected
from mfconnector.documents.text import TextBuilder

__all__ = ["pdf_text"]


def pdf_text(path: str, builder: TextBuilder) -> None:
    try:
        document = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as error:
        if error.err_code == pdfium_raw.FPDF_ERR_PASSWORD:
            raise protected("PDF") from None
        if error.err_code == pdfium_raw.FPDF_ERR_SECURITY:
            raise protected("PDF") from None
        raise corrupt("PDF") from None
    try:
        count = len(document)
        builder.parts_total = count
        builder.unit = "page"
        for index in range(count):
            builder.part(f"Page {index + 1}")
            page = document[index]
            try:
                textpage = page.get_textpage()
                try:
                    text = textpage.get_text_range()
                finally:
                    textpage.close()
            except pdfium.PdfiumError:
                builder.line("[this page could not be read]")
                continue
            finally:
                page.close()
            builder.add(text.replace("\r\n", "\n").replace("\r", "\n").strip() + "\n")
    finally:
        document.close()
