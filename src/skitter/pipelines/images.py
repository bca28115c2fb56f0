"""Scrapy's ``scrapy.pipelines.images`` path: the images pipeline (skitter[images])."""

from skitter.pipelines._images import ImageException, ImagesPipeline

__all__ = ["ImageException", "ImagesPipeline"]
