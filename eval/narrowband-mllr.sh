#!/bin/sh
# eval/narrowband-mllr.sh [DIR]: an MLLR transform of pocketsphinx-en-us for telephone-band audio
# (issue 20), after CMU's "Adapting the default acoustic model": sphinx_fe → bw → mllr_solve on the
# adaptation data eval/narrowband-adapt.ts writes into DIR (other voices made narrowband; none of
# the eval's 8 kHz prompts). Needs Debian's sphinxtrain and sphinxbase-utils. Writes DIR/mllr_matrix.
set -eu
DIR=${1:-/tmp/vidembed-narrowband-adapt}
HERE=$(cd "$(dirname "$0")" && pwd)
HMM=/usr/share/pocketsphinx/model/en-us/en-us
DICT=/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict
ST=/usr/lib/sphinxtrain
FEAT=${FEAT:-$HMM/feat.params}
cd "$DIR"
rm -rf model && mkdir model
cp "$HMM"/means "$HMM"/variances "$HMM"/transition_matrices "$HMM"/noisedict "$HMM"/mdef model/
cp "$FEAT" model/feat.params
pocketsphinx_mdef_convert -text "$HMM"/mdef model/mdef.txt > mdef.log 2>&1
python3 "$HERE/sendump2mixw.py" "$HMM"/sendump model/mixture_weights
sphinx_fe -argfile "$FEAT" -samprate 16000 -c adapt.fileids -di . -do . -ei raw -eo mfc -raw yes -input_endian little > fe.log 2>&1
"$ST"/bw -hmmdir model -moddeffn model/mdef.txt -ts2cbfn .ptm. -feat 1s_c_d_dd -svspec 0-12/13-25/26-38 \
  -cmn current -agc none -dictfn "$DICT" -ctlfn adapt.fileids -lsnfn adapt.transcription -accumdir . > bw.log 2>&1
"$ST"/mllr_solve -meanfn model/means -varfn model/variances -outmllrfn mllr_matrix -accumdir . > mllr.log 2>&1
echo "$DIR/mllr_matrix"
