// Drives Indexium's /v2 with the unmodified @xmcl/modrinth client, configured only with our base
// URL (the way XMCL points it at a mirror). Prints every answer as one JSON object; the pytest
// side (test_modrinth_client.py) checks them. Any client error (non-200) exits non-zero.
import { ModrinthV2Client } from '@xmcl/modrinth'

const [baseUrl, fabricSha1, oldSha1, forgeSha1] = process.argv.slice(2)
const client = new ModrinthV2Client({ baseUrl })
const out = {}

out.search = await client.searchProjects({ query: 'sodium' })
out.searchFacets = await client.searchProjects({
  facets: JSON.stringify([['categories:forge'], ['versions:1.20.1']]),
})
out.project = await client.getProject('sodium')
out.projectById = await client.getProject(out.project.id)
out.projects = await client.getProjects([out.project.id, 'fabric-api'])
out.versions = await client.getProjectVersions(out.project.id, { loaders: ['fabric'], gameVersions: ['1.20.1'] })
out.versionsForge120 = await client.getProjectVersions('sodium', { loaders: ['forge'], gameVersions: ['1.20.1'] })
out.version = await client.getProjectVersion(out.versions[0].id)
out.versionsById = await client.getProjectVersionsById([out.versions[0].id, 'not/an-id'])
out.byHash = await client.getProjectVersionByHash(fabricSha1)
out.byHashes = await client.getProjectVersionsByHash([fabricSha1, forgeSha1, 'f'.repeat(40)])
out.latest = await client.getLatestVersionsFromHashes([oldSha1, fabricSha1], {
  algorithm: 'sha1', loaders: ['fabric'], gameVersions: ['1.20.1'],
})
out.latestAny = await client.getLatestVersionsFromHashes([oldSha1])
out.latestOne = await client.getLatestProjectVersion(oldSha1, { loaders: ['fabric'], gameVersions: ['1.20.1'] })
out.gameVersions = await client.getGameVersionTags()
out.loaders = await client.getLoaderTags()
console.log(JSON.stringify(out))
