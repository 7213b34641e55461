# Writes the presenter's view tests' deck (python3-odf): three slides filled red, green and blue, each with
# its title and notes of two paragraphs ("Notes of slide N & more", "second line"). Run with Debian's
# python3 (/usr/bin/python3, where python3-odf is). Usage: impress_deck.py OUT.odp
import sys
from odf.draw import Frame, Page, TextBox
from odf.opendocument import OpenDocumentPresentation
from odf.presentation import Notes
from odf.style import DrawingPageProperties, MasterPage, PageLayout, PageLayoutProperties, Style
from odf.text import P

doc = OpenDocumentPresentation()
layout = PageLayout(name="PL")
layout.addElement(PageLayoutProperties(pagewidth="28cm", pageheight="21cm", printorientation="landscape"))
doc.automaticstyles.addElement(layout)
master = MasterPage(name="Default", pagelayoutname=layout)
doc.masterstyles.addElement(master)
for i, colour in enumerate(["#c02020", "#20a020", "#2040c0"]):
    style = Style(name="dp%d" % i, family="drawing-page")
    style.addElement(DrawingPageProperties(fill="solid", fillcolor=colour, backgroundsize="full"))
    doc.automaticstyles.addElement(style)
    page = Page(name="slide%d" % (i + 1), masterpagename=master, stylename=style)
    frame = Frame(width="20cm", height="3cm", x="4cm", y="2cm")
    box = TextBox()
    box.addElement(P(text="Slide %d" % (i + 1)))
    frame.addElement(box)
    page.addElement(frame)
    notes = Notes()
    notesFrame = Frame(width="16cm", height="10cm", x="2cm", y="14cm", **{"class": "notes"})
    notesBox = TextBox()
    notesBox.addElement(P(text="Notes of slide %d & more" % (i + 1)))
    notesBox.addElement(P(text="second line"))
    notesFrame.addElement(notesBox)
    notes.addElement(notesFrame)
    page.addElement(notes)
    doc.presentation.addElement(page)
doc.save(sys.argv[1])
