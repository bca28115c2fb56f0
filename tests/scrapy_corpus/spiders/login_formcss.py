"""FormRequest.from_response choosing the form by formcss, the button by clickdata; then
the logged-in quote pages, each once."""

import scrapy


class CssLoginSpider(scrapy.Spider):
    name = "css_login"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/login"]

    def parse(self, response):
        yield scrapy.FormRequest.from_response(
            response,
            formcss="form#login",
            clickdata={"name": "action"},
            formdata={"username": "ada", "password": "lovelace"},
            callback=self.after_login,
        )

    def after_login(self, response):
        logged_in = response.css("a[href='/logout']::text").get() == "Logout"
        for href in response.css("a.permalink::attr(href)").getall():
            yield response.follow(href, self.parse_quote, cb_kwargs={"logged_in": logged_in})
        yield from response.follow_all(css="li.next a", callback=self.after_login)

    def parse_quote(self, response, logged_in):
        yield {
            "url": response.url,
            "logged_in": logged_in,
            "goodreads": response.css("a[href*=goodreads]::attr(href)").get(),
        }
