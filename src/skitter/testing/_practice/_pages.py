"""The practice site's HTML, shaped as quotes.toscrape.com's, so that spiders written for
Scrapy's tutorial read it with the same selectors (``div.quote``, ``span.text``,
``small.author``, ``li.next a``, ``.author-born-date`` ...)."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from skitter.testing._practice._data import Author, PracticeData, Quote

__all__ = [
    "render_author",
    "render_list",
    "render_login",
    "render_message",
    "render_quote",
]


def _layout(
    body: str, *, logged_in: bool, title: str = "Quotes to Practice", lang: str = "en"
) -> str:
    account = '<a href="/logout">Logout</a>' if logged_in else '<a href="/login">Login</a>'
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="UTF-8">\n'
        f"<title>{escape(title)}</title>\n</head>\n<body>\n"
        '<div class="container">\n<div class="row header-box">\n'
        '<div class="col-md-8"><h1><a href="/">Quotes to Practice</a></h1></div>\n'
        f'<div class="col-md-4"><p>{account}</p></div>\n</div>\n'
        f"{body}\n"
        '<footer class="footer"><p class="copyright">A practice site for skitter\'s tests, '
        'after <a href="https://quotes.toscrape.com/">quotes.toscrape.com</a>.</p></footer>\n'
        "</div>\n</body>\n</html>\n"
    )


def _quote_block(quote: Quote, *, logged_in: bool) -> str:
    author = quote.author
    tags = "".join(
        f'\n            <a class="tag" href="/tag/{tag}/page/1/">{tag}</a>' for tag in quote.tags
    )
    goodreads = (
        f'\n        <a href="{escape(author.goodreads_link)}">(Goodreads page)</a>'
        if logged_in
        else ""
    )
    return (
        '<div class="quote" itemscope itemtype="http://schema.org/CreativeWork">\n'
        f'        <span class="text" itemprop="text">{escape(quote.shown, quote=False)}</span>\n'
        f'        <span>by <small class="author" itemprop="author">{escape(author.name)}</small>\n'
        f'        <a href="{author.path}">(about)</a>{goodreads}\n        </span>\n'
        '        <div class="tags">\n            Tags:\n'
        f'            <meta class="keywords" itemprop="keywords" content="{",".join(quote.tags)}">'
        f"{tags}\n        </div>\n"
        f'        <a class="permalink" href="{quote.path}">#</a>\n'
        "    </div>"
    )


def _pager(number: int, count: int, prefix: str) -> str:
    items = []
    if number > 1:
        items.append(
            f'<li class="previous"><a href="{prefix}/page/{number - 1}/">'
            '<span aria-hidden="true">&larr;</span> Previous</a></li>'
        )
    if number < count:
        items.append(
            f'<li class="next"><a href="{prefix}/page/{number + 1}/">'
            'Next <span aria-hidden="true">&rarr;</span></a></li>'
        )
    return '<nav>\n<ul class="pager">\n' + "\n".join(items) + "\n</ul>\n</nav>"


def _side_bar(data: PracticeData) -> str:
    links = "\n".join(
        f'<span class="tag-item"><a class="tag" href="/tag/{tag}/">{tag}</a></span>'
        for tag in data.top_tags()
    )
    return f'<div class="col-md-4 tags-box">\n<h2>Top Ten tags</h2>\n{links}\n</div>'


def render_list(
    data: PracticeData,
    quotes: Iterable[Quote],
    number: int,
    count: int,
    *,
    tag: str | None = None,
    logged_in: bool = False,
) -> str:
    """A page of quotes: the home pages (``tag=None``) or a tag's pages."""
    blocks = "\n".join(_quote_block(q, logged_in=logged_in) for q in quotes)
    heading = f'<h3>Viewing tag: <a href="/tag/{tag}/page/1/">{tag}</a></h3>\n' if tag else ""
    prefix = f"/tag/{tag}" if tag else ""
    body = (
        f'<div class="row">\n<div class="col-md-8">\n{heading}{blocks}\n'
        f"{_pager(number, count, prefix)}\n</div>\n{_side_bar(data)}\n</div>"
    )
    return _layout(body, logged_in=logged_in)


def render_author(author: Author, *, logged_in: bool = False, lang: str = "en") -> str:
    born = "Né le" if lang == "fr" else "Born:"
    body = (
        '<div class="author-details">\n'
        f'<h3 class="author-title">{escape(author.name)}\n    </h3>\n'
        f'<p><strong>{born}</strong> <span class="author-born-date">{escape(author.born_date)}'
        f'</span> <span class="author-born-location">in {escape(author.born_location)}</span></p>\n'
        f'<strong>Description:</strong>\n<div class="author-description">\n'
        f"        {escape(author.description)}\n    </div>\n</div>"
    )
    return _layout(body, logged_in=logged_in, title=f"{author.name} | Quotes", lang=lang)


def render_quote(quote: Quote, *, logged_in: bool = False) -> str:
    """One quote on a page of its own: what the sitemaps and the feeds link to."""
    body = (
        f'<div class="row">\n<div class="col-md-8">\n{_quote_block(quote, logged_in=logged_in)}\n'
        f'<p class="added">Added on <time datetime="{quote.added.isoformat()}">'
        f"{quote.added:%B %d, %Y}</time></p>\n</div>\n</div>"
    )
    return _layout(body, logged_in=logged_in, title=f"Quote {quote.id} | Quotes")


def render_login(token: str, *, error: str = "") -> str:
    message = f'<p class="error">{escape(error)}</p>\n' if error else ""
    body = (
        f"{message}"
        # A page's first form is often not the one wanted: from_response must be told.
        '<form action="/search.aspx" method="get" id="site-search">\n'
        '<input type="text" name="q"><input type="submit" value="Search"></form>\n'
        '<form action="/login" method="post" accept-charset="utf-8" id="login">\n'
        f'<input type="hidden" name="csrf_token" value="{escape(token)}">\n'
        '<div class="form-group"><label for="username">Username</label>\n'
        '<input type="text" class="form-control" id="username" name="username"></div>\n'
        '<div class="form-group"><label for="password">Password</label>\n'
        '<input type="password" class="form-control" id="password" name="password"></div>\n'
        '<input type="submit" name="action" value="Login" class="btn btn-primary">\n</form>'
    )
    return _layout(body, logged_in=False, title="Login | Quotes")


def render_message(text: str, *, logged_in: bool = False) -> str:
    return _layout(f'<p class="message">{escape(text)}</p>', logged_in=logged_in)
