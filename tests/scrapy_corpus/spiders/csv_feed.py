"""CSVFeedSpider over a CSV with a header row (quoted texts with commas and quotes)."""

from scrapy.spiders import CSVFeedSpider


class QuotesCsvSpider(CSVFeedSpider):
    name = "quotes_csv"
    delimiter = ","
    quotechar = '"'

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/feeds/quotes.csv"]

    def parse_row(self, response, row):
        return {
            "id": int(row["id"]),
            "text": row["text"],
            "author": row["author"],
            "tags": row["tags"].split("|") if row["tags"] else [],
        }
