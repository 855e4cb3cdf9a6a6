// The part of fuse-native 2.2.6 that powercut uses (the package ships no types).
declare module 'fuse-native' {
  type Callback = (err: Error | null) => void;
  type NativeHandler = (...args: any[]) => unknown;
  class Fuse {
    constructor(mountpoint: string, ops: Record<string, (...args: any[]) => void>, opts?: Record<string, unknown>);
    ops: Record<string, (...args: any[]) => void>;
    /** The absolute mountpoint (used by unmount). */
    mnt: string;
    /** Internal: the native fuse_thread_t of the mounted instance (null before mounting). */
    protected _thread: Buffer | null;
    mount(cb: Callback): void;
    unmount(cb: Callback): void;
    static unmount(mountpoint: string, cb: Callback): void;
    /** Internal: one function per opcode, called by the binding with the request's thread buffer first. */
    protected _makeHandlerArray(): (NativeHandler | undefined)[];
    /** Internal: which opcodes have a handler, one uint32 flag per opcode, as the native mount reads them. */
    protected _getImplementedArray(): Uint32Array;
    /** Internal (nanoresource): unmounts; 2.2.6 runs `fusermount -uz` through a shell, then fuse_native_unmount. */
    protected _close(cb: Callback): void;
  }
  export default Fuse;
}
