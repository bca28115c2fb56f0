"""Scrapy's ``LogFormatter`` (``scrapy.logformatter``) and the LOG_FORMATTER machinery;
see ``_logformatter``.
"""

from skitter.logformatter._logformatter import (
    CRAWLEDMSG,
    DOWNLOADERRORMSG_LONG,
    DOWNLOADERRORMSG_SHORT,
    DROPPEDMSG,
    ITEMERRORMSG,
    SCRAPEDMSG,
    SPIDERERRORMSG,
    FormattedLog,
    LogFormatter,
    install_log_formatter,
)

__all__ = [
    "CRAWLEDMSG",
    "DOWNLOADERRORMSG_LONG",
    "DOWNLOADERRORMSG_SHORT",
    "DROPPEDMSG",
    "ITEMERRORMSG",
    "SCRAPEDMSG",
    "SPIDERERRORMSG",
    "FormattedLog",
    "LogFormatter",
    "install_log_formatter",
]
