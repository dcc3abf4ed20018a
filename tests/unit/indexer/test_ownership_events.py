"""Who hears a version the ownership rules held or released (VersionStatusChanged)."""

from indexium_api.core.invalidation import tags_for
from indexium_contracts import versions
from indexium_indexer.notify.worker import Worker
from indexium_indexer.release.worker import SUBJECTS

RELEASED = versions.VersionStatusChanged(mod_id="00000000-0000-0000-0000-000000000001", slug="harvestalmanac-bob",
                                         version_id="00000000-0000-0000-0000-000000000002", version_number="5.1.0",
                                         status="public", visible=True, reason="no re-upload or disputed mod id left")


def test_a_released_version_reaches_the_api_and_the_notify_role():
    assert SUBJECTS[versions.VersionStatusChanged] == versions.STATUS_CHANGED
    assert versions.STATUS_CHANGED in versions.NOTIFY.filter_subjects  # subscribers hear of it
    assert Worker.accepts(None, versions.decoder.decode(versions.encoder.encode(RELEASED)))
    assert tags_for(versions.encoder.encode(RELEASED)) == ("version_status_changed.v1",
                                                           ("global", "mod:harvestalmanac-bob"))
