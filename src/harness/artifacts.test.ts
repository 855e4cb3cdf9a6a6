import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyStoredImage, writeImageFolderLists } from './artifacts.js';

let tmp: string | undefined;
afterEach(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
  tmp = undefined;
});

describe('stored images keep their empty folders (git does not)', () => {
  it('an image whose folders are all empty comes back whole from its folder list alone', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-artifacts-test-'));
    const images = path.join(tmp, 'artifact', 'images');
    await mkdir(path.join(images, 'cut-0-after-crash', 'streams', 'S', 'msgs'), { recursive: true });
    await mkdir(path.join(images, 'cut-0-live', 'streams'), { recursive: true });
    await writeFile(path.join(images, 'cut-0-live', 'streams', 'meta.inf'), 'm');
    await writeImageFolderLists(images);
    // A clone: the files and the lists, no empty folder.
    await rm(path.join(images, 'cut-0-after-crash'), { recursive: true });

    const dest = path.join(tmp, 'copy');
    expect(await copyStoredImage(path.join(tmp, 'artifact'), 'cut-0-after-crash', dest)).toBe(true);
    expect(existsSync(path.join(dest, 'streams', 'S', 'msgs'))).toBe(true);
    expect(await copyStoredImage(path.join(tmp, 'artifact'), 'cut-0-live', path.join(tmp, 'live'))).toBe(true);
    expect(await readFile(path.join(tmp, 'live', 'streams', 'meta.inf'), 'utf8')).toBe('m');
    expect(await copyStoredImage(path.join(tmp, 'artifact'), 'cut-1-after-crash', path.join(tmp, 'none'))).toBe(false);
  });

  it('a folder list that points outside the image is refused, naming the file', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-artifacts-test-'));
    await mkdir(path.join(tmp, 'images'));
    await writeFile(path.join(tmp, 'images', 'cut-0-after-crash.dirs.json'), '["../escape"]');
    await expect(copyStoredImage(tmp, 'cut-0-after-crash', path.join(tmp, 'copy'))).rejects.toThrow(/cut-0-after-crash\.dirs\.json: expected a list of relative folder paths/);
  });
});
