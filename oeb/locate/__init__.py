"""Where a document prints each value: the locator `oeb view` outlines verdicts with (and grounding
scores build on). Read a PDF's pages as words and lines (`PdfPages`; scans by OCR when Tesseract is
installed), index them once (`index_of`), then place one side's values (`locate_values`): each gets a
`Located` with its status, best page and box, and how many other places print it.
"""

from oeb.locate.joint import Label, Located, Status, label_of, locate_values
from oeb.locate.match import LONGEST, Index, index_of
from oeb.locate.pages import PdfPages

__all__ = ["LONGEST", "Index", "Label", "Located", "PdfPages", "Status", "index_of", "label_of", "locate_values"]
