"""One nats-server cluster configuration for the loopback cluster and the partitionable one
(nodes in network namespaces): the namespaced cluster is the loopback one placed elsewhere."""

from __future__ import annotations

from indexium_devstack import netns
from indexium_devstack.embedded import EmbeddedNatsCluster


def test_the_loopback_cluster_routes_each_node_to_the_others(tmp_path):
    c = EmbeddedNatsCluster(tmp_path, 3)
    text = c._config(1).read_text()
    assert f'listen: "127.0.0.1:{c.client_ports[1]}"' in text
    assert f'listen: "127.0.0.1:{c.cluster_ports[1]}"' in text
    routes = text.split("routes: [", 1)[1].split("]", 1)[0]
    assert routes == (f"nats-route://127.0.0.1:{c.cluster_ports[0]}, "
                      f"nats-route://127.0.0.1:{c.cluster_ports[2]}")
    assert f'store_dir: "{tmp_path / "n1"}"' in text and 'name: "indexium"' in text
    assert c.url == ",".join(f"nats://127.0.0.1:{p}" for p in c.client_ports)


def test_the_partitionable_cluster_is_the_same_cluster_at_namespace_addresses(tmp_path):
    net = netns.PrivateNetwork(3)  # not created: only its addresses and commands are read here
    net.addresses = ["10.201.7.10", "10.201.7.11", "10.201.7.12"]
    c = netns.PartitionableNatsCluster(tmp_path, net)
    assert isinstance(c, EmbeddedNatsCluster)
    assert type(c)._config is EmbeddedNatsCluster._config and type(c).start is EmbeddedNatsCluster.start
    text = c._config(0).read_text()
    assert 'listen: "10.201.7.10:4222"' in text and 'listen: "10.201.7.10:6222"' in text
    assert "nats-route://10.201.7.11:6222, nats-route://10.201.7.12:6222" in text
    assert c.client_url(2) == "nats://10.201.7.12:4222"
    assert c.url == "nats://10.201.7.10:4222,nats://10.201.7.11:4222,nats://10.201.7.12:4222"
    assert c._wrap(1, ["nats-server", "-c", "n1.conf"]) == ["ip", "netns", "exec", net.namespaces[1],
                                                            "nats-server", "-c", "n1.conf"]
