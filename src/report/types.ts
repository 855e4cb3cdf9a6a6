// The input of the artifact report: an artifact as readArtifact returns it, plus its image files.
// Plain data, so the renderer stays pure and unit tests can build artifacts by hand.
import type { StoredArtifact } from '../harness/artifacts.js';

export interface ImageEntry {
  kind: 'file' | 'dir' | 'other';
  sizeBytes: number;
  /** A file's bytes: all of them, or the first ones when the loader's cap cut it (bytes.length < sizeBytes). */
  bytes?: Uint8Array;
}

/** One image folder (the filesystem at a cut): relative path ('page.1', 'sub/x') to entry. A Map, so no file name can collide with an object key. */
export type ImageFiles = Map<string, ImageEntry>;

/** The images of cut K: live and durable at the cut, and what recovery started from (the only one a crash state has). */
export interface CutImages {
  live?: ImageFiles;
  durable?: ImageFiles;
  afterCrash?: ImageFiles;
}

export interface ReportArtifact extends Omit<StoredArtifact, 'dir'> {
  /** The artifact folder, shown with the replay command; absent for hand-made data. */
  dir?: string;
  /** images[K] for cut K; missing entries mean the images were not captured. */
  images: CutImages[];
}
