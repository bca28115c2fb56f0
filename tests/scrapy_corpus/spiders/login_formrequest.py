"""Logging in with a plain FormRequest: the spider reads the CSRF token itself, then
visits author pages as a logged-in user."""

import scrapy
from scrapy.http import FormRequest


class TokenLoginSpider(scrapy.Spider):
    name = "token_login"
    base_url = "http://127.0.0.1:8000"

    async def start(self):
        yield scrapy.Request(f"{self.base_url}/login", callback=self.login)

    def login(self, response):
        token = response.css("input[name=csrf_token]::attr(value)").get()
        yield FormRequest(
            f"{self.base_url}/login",
            formdata={"csrf_token": token, "username": "jane", "password": "s3cret"},
            callback=self.logged_in,
        )

    def logged_in(self, response):
        yield from response.follow_all(css=".author + a", callback=self.parse_author)
        yield from response.follow_all(css="li.next a", callback=self.logged_in)

    def parse_author(self, response):
        yield {
            "name": response.css("h3.author-title::text").get().strip(),
            "logged_in": response.css('a[href="/logout"]::text').get() == "Logout",
        }
