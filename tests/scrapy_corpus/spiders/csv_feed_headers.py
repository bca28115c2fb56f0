"""CSVFeedSpider told the columns (the file has no header row) and a ';' delimiter."""

from scrapy.spiders import CSVFeedSpider


class AuthorsCsvSpider(CSVFeedSpider):
    name = "authors_csv"
    delimiter = ";"
    headers = ["slug", "name", "born", "location"]

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/feeds/authors.csv"]

    def parse_row(self, response, row):
        yield {"slug": row["slug"], "name": row["name"], "location": row["location"]}
