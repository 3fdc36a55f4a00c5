"""The server's page: a form to paste a text, and its explanation drawn by hierattn's own renderer.

A plain HTML form that posts back to `/`: no script, no external asset, so
it works in any browser and under a Content-Security-Policy that allows
neither (`POLICY`). The explanation is `hierattn.explain.picture.to_html`'s
fragment, which escapes every text it shows; the text in the form is
escaped here. The page's own words are English (`lang="en"`); the text may be
in any language, so the form's field takes its direction from what is typed
(`dir="auto"`: Arabic right to left), as the explanation's text does.
"""

import html

from hierattn.explain.picture import ROOT

# No script may run and nothing may load from elsewhere; styles are the page's own (inline, as the renderer writes them).
POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)

_STYLE = f"""
body {{ font-family: Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 62em; padding: 0 1em; color: #222; }}
h1 {{ font-size: 1.3em; margin-bottom: .1em; }} .about {{ color: #555; font-size: .9em; margin-top: 0; }}
textarea {{ width: 100%; box-sizing: border-box; font: 1em Georgia, 'Times New Roman', serif; padding: .4em; }}
button {{ font-size: 1em; padding: .3em 1.2em; margin: .4em 0 1em; }}
.error {{ background: #fdecea; border-left: 3px solid #c0392b; padding: .3em .6em; color: #7b241c; }}
.{ROOT} {{ margin-top: .5em; }}
"""


def page(about, text="", explanation="", error=None):
    """The whole page: a title, `about` (one line on the model), the form holding `text`, then an error or the explanation.

    Args:
        about: A line that says which model answers (escaped here).
        text: The text in the form (escaped here).
        explanation: The renderer's HTML fragment (already escaped by it), or "".
        error: A message to show instead of an explanation (escaped here).
    """
    shown = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else explanation
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>hierattn: explain a text</title><style>{_STYLE}</style></head><body>\n"
        f'<h1>Explain a text</h1><p class="about">{html.escape(about)}</p>\n'
        '<form method="post" action="/"><label for="text">Text</label>'
        f'<textarea id="text" name="text" rows="8" dir="auto" required>{html.escape(text)}</textarea>'
        '<button type="submit">Explain</button></form>\n'
        f"{shown}\n</body></html>\n"
    )
