"""``make run``'s PostgreSQL connections sized to the machine it shares (indexium_devstack.stack)."""

from indexium_devstack.stack import machine_sized


def test_the_pools_are_four_a_core_at_most_their_defaults_and_an_explicit_setting_wins():
    assert machine_sized({}, cores=2) == {"INDEXIUM_API_DB_POOL_SIZE": "8", "INDEXIUM_INDEXER_CONCURRENCY": "8"}
    assert machine_sized({}, cores=16) == {"INDEXIUM_API_DB_POOL_SIZE": "20", "INDEXIUM_INDEXER_CONCURRENCY": "16"}
    assert machine_sized({"INDEXIUM_API_DB_POOL_SIZE": "3"}, cores=2)["INDEXIUM_API_DB_POOL_SIZE"] == "3"
