# Pure-Python (stdlib only) check of the 32008 bitshuffle+LZ4 and 32004 LZ4 chunk formats against
# the unfiltered fixture copies. Run: python3 crates/hdf5/tests/data/issue5_verify_bslz4.py from the
# repository root; fixtures from $SCATTERLAB_FIXTURES/stem, default ../shared/fixtures/stem beside the repository.
import os, struct, sys
FIXTURES = os.path.join(os.environ.get('SCATTERLAB_FIXTURES') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../../../shared/fixtures'), 'stem') + '/'
def lz4_block(src, out_len):
    dst = bytearray(); i = 0
    while i < len(src):
        tok = src[i]; i += 1
        lit = tok >> 4
        if lit == 15:
            while True:
                b = src[i]; i += 1; lit += b
                if b != 255: break
        dst += src[i:i+lit]; i += lit
        if i >= len(src): break
        off = src[i] | (src[i+1] << 8); i += 2
        ml = tok & 15
        if ml == 15:
            while True:
                b = src[i]; i += 1; ml += b
                if b != 255: break
        ml += 4
        for _ in range(ml): dst.append(dst[-off])
    assert len(dst) == out_len, (len(dst), out_len)
    return bytes(dst)
def unshuffle(buf, n, es):
    # shuffled bit row r = j*8+k (byte j, bit k), row length n/8 bytes; bit m of row byte i = element 8i+m
    out = bytearray(n*es); nb = n//8
    for j in range(es):
        for k in range(8):
            row = buf[(j*8+k)*nb:(j*8+k+1)*nb]
            for i in range(nb):
                v = row[i]
                if v:
                    for m in range(8):
                        if v >> m & 1: out[(8*i+m)*es + j] |= 1 << k
    return bytes(out)
def decode(chunk, es):
    total, bsz = struct.unpack('>QI', chunk[:12]); p = 12
    n = total // es; bs = bsz // es; out = bytearray(); done = 0
    while n - done >= 8:
        this = bs if n - done >= bs else (n - done) // 8 * 8
        c = struct.unpack('>I', chunk[p:p+4])[0]; p += 4
        out += unshuffle(lz4_block(chunk[p:p+c], this*es), this, es); p += c; done += this
    out += chunk[p:p + (n-done)*es]
    return bytes(out)
for comp, raw, total, bsz, es in [('dev_small_data_000001.h5','dev_small_raw_data_000001.h5',8192,8192,2),
                                  ('dev_oddtail_data_000001.h5','dev_oddtail_raw_data_000001.h5',8174,8192,2),
                                  ('dev_small_u32_data_000001.h5',None,16384,8192,4),
                                  ('dev_medium_data_000001.h5',None,18432,8192,2)]:
    d = FIXTURES
    b = open(d+comp,'rb').read(); i = b.find(struct.pack('>QI', total, bsz))
    dec = decode(b[i:], es)
    vals = struct.unpack('<%d%s' % (total//es, 'H' if es==2 else 'I'), dec)
    msg = f'{comp}: sum={sum(vals)} max={max(vals)}'
    if raw:
        r = open(d+raw,'rb').read(); msg += f' found_in_raw_at={r.find(dec)}'
    print(msg)
def h5lz4(chunk):
    orig, bsz = struct.unpack('>QI', chunk[:12]); p = 12; out = bytearray(); bsz = min(bsz, orig)
    while len(out) < orig:
        this = min(bsz, orig - len(out)); c = struct.unpack('>I', chunk[p:p+4])[0]; p += 4
        out += chunk[p:p+c] if c == this else lz4_block(chunk[p:p+c], this); p += c
    return bytes(out), p
d = FIXTURES
r = open(d+'dev_small_raw_data_000001.h5','rb').read()
for f, bsz in [('dev_small_lz4blk_data_000001.h5', 4096), ('dev_small_lz4_data_000001.h5', 8192)]:
    b = open(d+f,'rb').read(); i = b.find(struct.pack('>QI', 8192, bsz))
    dec, used = h5lz4(b[i:]); print(f, 'bytes used', used, 'found_in_raw_at', r.find(dec))
