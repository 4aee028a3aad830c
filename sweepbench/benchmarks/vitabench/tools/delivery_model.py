"""The delivery tables of the typed task view: stores and the products on their menus."""

from __future__ import annotations

from msgspec import Struct

from sweepbench.benchmarks.vitabench.tools.common import Location


class StoreProduct(Struct):
    """A product on a store's menu; ``attributes`` lists the specs one may choose."""

    product_id: str
    name: str
    store_id: str
    store_name: str
    price: float
    tags: list[str] = []
    attributes: list[str] = []


class Store(Struct):
    store_id: str
    name: str
    score: float
    location: Location
    tags: list[str] = []
    products: list[StoreProduct] = []
