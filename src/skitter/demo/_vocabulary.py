"""Words the demo catalogue is made of: categories, product names, descriptions, tags.

Deliberately full of typographic characters (é, —, €, ½, «») so that every page tests
text decoding; hence the file-wide RUF001 exemption.
"""

# ruff: noqa: RUF001

from __future__ import annotations

__all__ = ["CATEGORIES", "CLOSERS", "OPENERS", "TAGS"]

# (slug, display name, SKU prefix, product nouns, qualifiers)
CATEGORIES: tuple[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "coffee",
        "Café & Coffee",
        "CF",
        ("Espresso", "Lungo", "Moka blend", "Café crème", "Cold brew", "Filter roast"),
        (
            "Éthiopie Yirgacheffe",
            "Colombia Huila",
            "Brasil Cerrado",
            "Sumatra Mandheling",
            "Guatemala Antigua",
            "Kenya AA",
            "Costa Rica Tarrazú",
            "Honduras Marcala",
        ),
    ),
    (
        "tea",
        "Tea",
        "TE",
        ("Sencha", "Darjeeling", "Earl Grey", "Oolong", "Rooibos", "Masala chai"),
        (
            "first flush",
            "smoked",
            "with bergamot",
            "Tieguanyin",
            "vanilla",
            "organic",
            "Assam blend",
            "Ceylon",
        ),
    ),
    (
        "chocolate",
        "Chocolate",
        "CH",
        ("Dark bar", "Milk bar", "Pralinés", "Truffles", "Hot chocolate", "Gianduja"),
        (
            "70 % Madagascar",
            "sea salt",
            "noisette",
            "Piemonte",
            "Ecuador 85 %",
            "caramel beurre salé",
            "orange zest",
            "raspberry",
        ),
    ),
    (
        "patisserie",
        "Pâtisserie",
        "PA",
        ("Macarons", "Financiers", "Madeleines", "Canelés", "Palmiers", "Calissons"),
        (
            "pistache",
            "citron",
            "framboise",
            "fleur d'oranger",
            "vanille Bourbon",
            "chocolat",
            "café",
            "miel",
        ),
    ),
    (
        "cheese",
        "Fromagerie",
        "FR",
        ("Comté", "Gruyère", "Roquefort", "Brie de Meaux", "Tomme", "Manchego"),
        (
            "12 months",
            "24 months",
            "AOP",
            "fermier",
            "au lait cru",
            "de Savoie",
            "affiné",
            "réserve",
        ),
    ),
    (
        "spices",
        "Spices",
        "SP",
        ("Saffron", "Vanilla pods", "Piment d'Espelette", "Za'atar", "Sumac", "Ras el hanout"),
        ("La Mancha", "Bourbon", "smoked", "grade A", "whole", "ground", "AOP", "organic"),
    ),
    (
        "kitchen",
        "Kitchenware",
        "KI",
        ("Moka pot", "Tea kettle", "Whisk", "Cast-iron pan", "Knife", "Cheese board"),
        ("petite", "grande", "copper", "enamel", "olive wood", "stainless", "24 cm", "Sabatier"),
    ),
    (
        "books",
        "Cookbooks",
        "BO",
        (
            "Le Guide",
            "The Baker's Year",
            "Pâtisserie at Home",
            "Spice Routes",
            "The Cheese Cellar",
            "Café Culture",
        ),
        (
            "2nd edition",
            "paperback",
            "hardcover",
            "signed",
            "illustrated",
            "pocket",
            "Français",
            "English",
        ),
    ),
)

OPENERS = (
    "Try it with a « Café crème — 5 € » at our counter.",
    "Notes of crème brûlée, raisin and épices douces.",
    "Selected by our buyer in Zürich for its naïve, honest character.",
    "A goûter favourite — serve with ½ cup of warm milk.",
    "Größe und Gewicht können leicht variieren.",
    "Made in small batches; façon grand-mère.",
    "Our best-seller since 2009 — « simple et bon ».",
    "Store below 18 °C, away from light.",
)
CLOSERS = (
    "Ships in 2–3 days.",
    "Gift wrapping available.",
    "Limited stock this season.",
    "Free delivery from 49 €.",
    "Certified organic (EU · bio).",
    "Crafted in Lyon, France.",
)
TAGS = ("organic", "fair-trade", "bestseller", "new", "vegan", "gift", "limited", "éco")
