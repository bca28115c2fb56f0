"""Tests of skitter.downloader."""
