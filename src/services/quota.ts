/**
 * The per-owner storage quota (issue 21; docs/operations.md): what an owner keeps — their videos'
 * files, their tensor uploads, the payloads of their waiting tasks — may not pass the library's
 * `storageQuotaBytes` (VIDEMBED_STORAGE_QUOTA_MB; none: no limit). A request that would pass it is
 * refused before anything is stored with 413 `storage_quota_exceeded` (the caller's limit; 507 is
 * the server's disk being full). Admin keys and the local CLI are not limited.
 */
import { StorageQuotaError } from '../api/errors.js';
import type { Principal } from '../api/principal.js';
import type { Library } from './library.js';

/** What `owner` stores now, in bytes. */
export async function storageUsed(lib: Pick<Library, 'catalog' | 'blobs'>, owner: string): Promise<number> {
  const [videos, tensors, tasks] = await Promise.all([
    lib.catalog.videos.bytesOfOwner(owner),
    lib.blobs.bytesUnder(`tensors/${owner}`),
    lib.blobs.bytesUnder(`tasks/${owner}`), // every task's folder (taskBlobPrefix)
  ]);
  return videos + tensors + tasks;
}

/** Throws StorageQuotaError when storing `incoming` more bytes would take `p`'s owner over the quota. */
export async function checkStorageQuota(lib: Pick<Library, 'catalog' | 'blobs' | 'storageQuotaBytes'>, p: Principal, incoming: number): Promise<void> {
  const quota = lib.storageQuotaBytes;
  if (quota === undefined || p.admin) return;
  const used = await storageUsed(lib, p.owner);
  if (used + incoming > quota) {
    const mib = (n: number) => `${(n / 1024 ** 2).toFixed(1)} MiB`;
    throw new StorageQuotaError(`storing ${mib(incoming)} more would pass the storage quota of ${mib(quota)} (${mib(used)} used): delete videos, tasks or tensor uploads first`);
  }
}
