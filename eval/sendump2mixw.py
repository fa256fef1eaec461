#!/usr/bin/env python3
"""sendump2mixw.py SENDUMP MIXTURE_WEIGHTS: pocketsphinx's quantised mixture weights (`sendump`,
what pocketsphinx-en-us ships) as a Sphinx-III `mixture_weights` file, which sphinxtrain's `bw`
needs for adaptation. A Python 3 port of sphinxtrain's python/cmusphinx/sendump.py (Python 2 only
in Debian's sphinxtrain 1.0.8) and of its S3 writer (s3file.py), for eval/narrowband-mllr.sh."""
import struct
import sys

import numpy


def read_sendump(filename):
    fmt = ['I']

    def unpack(b):
        n = struct.unpack(fmt[0], b)[0]
        if n > 65536:
            fmt[0] = '!I'
            n = struct.unpack(fmt[0], b)[0]
        return n

    with open(filename, 'rb') as fh:
        def readstr():
            n = unpack(fh.read(4))
            return None if n == 0 else fh.read(n)[0:-1].decode('latin-1')

        mixture_count = model_count = feature_count = cluster_count = 0
        mixw_shift = 10
        readstr()  # title
        while True:
            header = readstr()
            if header is None:
                break
            key, _, value = header.partition(' ')
            if key == 'mixture_count':
                mixture_count = int(value)
            elif key == 'model_count':
                model_count = int(value)
            elif key == 'mixw_shift':
                mixw_shift = int(value)
            elif key == 'feature_count':
                feature_count = int(value)
            elif key == 'cluster_count':
                cluster_count = int(value)
        if cluster_count == 0:
            model_count = unpack(fh.read(4))
            mixture_count = unpack(fh.read(4))
        opdf = numpy.empty((mixture_count, feature_count, model_count))
        for i in range(feature_count):
            for j in range(model_count):
                mixw = numpy.frombuffer(fh.read(mixture_count), 'B').astype('i') << mixw_shift
                opdf[:, i, j] = numpy.power(1.0001, -mixw)
    return opdf


def write_mixw(filename, mixw):
    d1, d2, d3 = mixw.shape
    with open(filename, 'wb') as fh:
        fh.write(b's3\nversion 1.0\n')
        lsb = (fh.tell() + len('endhdr\n')) & 3
        fh.write((' ' * (4 - lsb) if lsb else '').encode() + b'endhdr\n')
        fh.write(struct.pack('=i', 0x11223344))
        fh.write(struct.pack('=IIII', d1, d2, d3, d1 * d2 * d3))
        mixw.ravel().astype('f').tofile(fh)


if __name__ == '__main__':
    if len(sys.argv) < 3:
        sys.exit('usage: sendump2mixw.py SENDUMP MIXTURE_WEIGHTS')
    write_mixw(sys.argv[2], read_sendump(sys.argv[1]))
