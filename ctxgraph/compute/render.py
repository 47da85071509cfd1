"""Rendering a computed context as Markdown with a Jinja2 template.

The default template ships in ``compute/templates/context.md.j2``; a user's
template (its text, read by the caller) can replace it. Pure: no file IO here.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from ctxgraph.errors import ConfigurationError

if TYPE_CHECKING:
    import jinja2

    from ctxgraph.compute.output import ComputedContext

_BLANK_RUNS = re.compile(r"\n{3,}")


def inline(value: object) -> str:
    """Text on one line (newlines folded to spaces)."""
    return " ".join(str(value or "").split())


def short(value: object) -> str:
    """A text's first sentence, cut to 60 characters (a decision named in a marker line)."""
    from ctxgraph.compute.compress import first_sentence

    return first_sentence(inline(value), 60)


def cell(value: object) -> str:
    """Text safe inside a Markdown table cell."""
    return inline(value).replace("|", "\\|")


@functools.cache
def _environment() -> jinja2.Environment:
    import jinja2  # on the first render: commands that render nothing skip its import

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ctxgraph.compute", "templates"),
        autoescape=False,  # Markdown, not HTML
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["inline"] = inline
    env.filters["cell"] = cell
    env.filters["short"] = short
    return env


def render(ctx: ComputedContext, *, debug: bool = False, template: str | None = None) -> str:
    """Markdown for ``ctx``; ``template`` is the text of a replacement template."""
    import jinja2

    env = _environment()
    try:
        tmpl = env.from_string(template) if template is not None else env.get_template("context.md.j2")
        text = tmpl.render(ctx=ctx, debug=debug)
    except jinja2.TemplateError as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, jinja2.TemplateSyntaxError) else ""
        raise ConfigurationError(f"context template error{where}: {exc.message or exc}") from None
    return _BLANK_RUNS.sub("\n\n", text).strip() + "\n"

