"""Logging in the way Scrapy's documentation shows: FormRequest.from_response fills the
form (its hidden CSRF token included; formxpath picks it, the page's first form is a
search box); the session cookie does the rest."""

import scrapy


class LoginSpider(scrapy.Spider):
    name = "login"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/login"]

    def parse(self, response):
        return scrapy.FormRequest.from_response(
            response,
            formxpath='//form[@action="/login"]',
            formdata={"username": "john", "password": "secret"},
            callback=self.after_login,
        )

    def after_login(self, response):
        if response.css('a[href="/logout"]').get() is None:
            self.logger.error("Login failed")
            return
        for quote in response.css("div.quote"):
            yield {
                "author": quote.css("small.author::text").get(),
                "goodreads": quote.css('a[href*="goodreads.com"]::attr(href)').get(),
            }
        yield from response.follow_all(css="li.next a", callback=self.after_login)
