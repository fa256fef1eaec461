;; WebAssembly SIMD kernels for CLIP preprocessing: Pillow's 8-bit two-pass convolution resample
;; (22-bit fixed-point taps, round, clamp to 0..255 after each pass) and the float32 normalisation.
;; Same integer arithmetic as src/models/clip/preprocess.ts (the reference, bit-exact with Pillow).
;;
;; Build (wabt, not a project dependency):
;;   npx -y wabt@1.0.39 wat2wasm src/models/clip/resample.wat -o /tmp/resample.wasm   (SIMD is on by default)
;;   node -e "console.log(require('fs').readFileSync('/tmp/resample.wasm').toString('base64'))"
;; and paste the base64 into resample-wasm.ts.
(module
  (memory (export "memory") 1)

  ;; Horizontal pass. `src` points at the first source row needed; rows are `rowStride` bytes (RGB24).
  ;; For each of `rows` rows and `outW` output columns: taps[j] = (starts[j], counts[j], weights[j*ksize..]).
  ;; Writes RGB24 to `dst` (4 bytes per store: dst needs 1 byte of slack at the end).
  (func (export "horiz")
    (param $src i32) (param $rowStride i32) (param $rows i32) (param $outW i32)
    (param $starts i32) (param $counts i32) (param $weights i32) (param $ksize i32) (param $dst i32)
    (local $y i32) (local $j i32) (local $t i32) (local $n i32) (local $row i32) (local $si i32) (local $wi i32)
    (local $acc v128)
    (local.set $y (i32.const 0))
    (block $rows_done
      (loop $rows_loop
        (br_if $rows_done (i32.ge_u (local.get $y) (local.get $rows)))
        (local.set $row (i32.add (local.get $src) (i32.mul (local.get $y) (local.get $rowStride))))
        (local.set $j (i32.const 0))
        (block $cols_done
          (loop $cols_loop
            (br_if $cols_done (i32.ge_u (local.get $j) (local.get $outW)))
            (local.set $n (i32.load (i32.add (local.get $counts) (i32.shl (local.get $j) (i32.const 2)))))
            (local.set $si
              (i32.add (local.get $row)
                (i32.mul (i32.load (i32.add (local.get $starts) (i32.shl (local.get $j) (i32.const 2)))) (i32.const 3))))
            (local.set $wi (i32.add (local.get $weights) (i32.shl (i32.mul (local.get $j) (local.get $ksize)) (i32.const 2))))
            (local.set $acc (i32x4.splat (i32.const 2097152)))
            (local.set $t (i32.const 0))
            (block $taps_done
              (loop $taps_loop
                (br_if $taps_done (i32.ge_u (local.get $t) (local.get $n)))
                (local.set $acc
                  (i32x4.add (local.get $acc)
                    (i32x4.mul
                      (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u (v128.load32_zero (local.get $si))))
                      (i32x4.splat (i32.load (local.get $wi))))))
                (local.set $si (i32.add (local.get $si) (i32.const 3)))
                (local.set $wi (i32.add (local.get $wi) (i32.const 4)))
                (local.set $t (i32.add (local.get $t) (i32.const 1)))
                (br $taps_loop)))
            ;; >> 22, then saturating narrows clamp to 0..255 exactly like Pillow's clip8.
            (local.set $acc (i32x4.shr_s (local.get $acc) (i32.const 22)))
            (local.set $acc (i16x8.narrow_i32x4_u (local.get $acc) (local.get $acc)))
            (local.set $acc (i8x16.narrow_i16x8_u (local.get $acc) (local.get $acc)))
            (v128.store32_lane 0 (local.get $dst) (local.get $acc))
            (local.set $dst (i32.add (local.get $dst) (i32.const 3)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cols_loop)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $rows_loop))))

  ;; The horizontal pass on 4 rows at a time (the taps of a column are the same for every row, so
  ;; each weight is loaded once for 4 rows). `rows` must be a multiple of 4; each pixel is stored as
  ;; 2 + 1 bytes so no store spills into a neighbouring row.
  (func (export "horiz4")
    (param $src i32) (param $rowStride i32) (param $rows i32) (param $outW i32)
    (param $starts i32) (param $counts i32) (param $weights i32) (param $ksize i32) (param $dst i32)
    (local $y i32) (local $j i32) (local $t i32) (local $n i32) (local $row i32) (local $si i32) (local $wi i32)
    (local $dstStride i32) (local $d i32) (local $w v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $dstStride (i32.mul (local.get $outW) (i32.const 3)))
    (local.set $y (i32.const 0))
    (block $rows_done
      (loop $rows_loop
        (br_if $rows_done (i32.ge_u (local.get $y) (local.get $rows)))
        (local.set $row (i32.add (local.get $src) (i32.mul (local.get $y) (local.get $rowStride))))
        (local.set $d (i32.add (local.get $dst) (i32.mul (local.get $y) (local.get $dstStride))))
        (local.set $j (i32.const 0))
        (block $cols_done
          (loop $cols_loop
            (br_if $cols_done (i32.ge_u (local.get $j) (local.get $outW)))
            (local.set $n (i32.load (i32.add (local.get $counts) (i32.shl (local.get $j) (i32.const 2)))))
            (local.set $si
              (i32.add (local.get $row)
                (i32.mul (i32.load (i32.add (local.get $starts) (i32.shl (local.get $j) (i32.const 2)))) (i32.const 3))))
            (local.set $wi (i32.add (local.get $weights) (i32.shl (i32.mul (local.get $j) (local.get $ksize)) (i32.const 2))))
            (local.set $a0 (i32x4.splat (i32.const 2097152)))
            (local.set $a1 (local.get $a0))
            (local.set $a2 (local.get $a0))
            (local.set $a3 (local.get $a0))
            (local.set $t (i32.const 0))
            (block $taps_done
              (loop $taps_loop
                (br_if $taps_done (i32.ge_u (local.get $t) (local.get $n)))
                (local.set $w (i32x4.splat (i32.load (local.get $wi))))
                (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (local.get $w)
                  (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u (v128.load32_zero (local.get $si)))))))
                (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (local.get $w)
                  (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u
                    (v128.load32_zero (i32.add (local.get $si) (local.get $rowStride))))))))
                (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (local.get $w)
                  (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u
                    (v128.load32_zero (i32.add (local.get $si) (i32.shl (local.get $rowStride) (i32.const 1)))))))))
                (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (local.get $w)
                  (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u
                    (v128.load32_zero (i32.add (local.get $si) (i32.mul (local.get $rowStride) (i32.const 3)))))))))
                (local.set $si (i32.add (local.get $si) (i32.const 3)))
                (local.set $wi (i32.add (local.get $wi) (i32.const 4)))
                (local.set $t (i32.add (local.get $t) (i32.const 1)))
                (br $taps_loop)))
            ;; Narrow all four rows at once: lanes 0-3 = row 0 (R G B x), 4-7 = row 1, ...
            (local.set $a0
              (i8x16.narrow_i16x8_u
                (i16x8.narrow_i32x4_u (i32x4.shr_s (local.get $a0) (i32.const 22)) (i32x4.shr_s (local.get $a1) (i32.const 22)))
                (i16x8.narrow_i32x4_u (i32x4.shr_s (local.get $a2) (i32.const 22)) (i32x4.shr_s (local.get $a3) (i32.const 22)))))
            (v128.store16_lane 0 (local.get $d) (local.get $a0))
            (v128.store8_lane offset=2 2 (local.get $d) (local.get $a0))
            (v128.store16_lane 2 (i32.add (local.get $d) (local.get $dstStride)) (local.get $a0))
            (v128.store8_lane offset=2 6 (i32.add (local.get $d) (local.get $dstStride)) (local.get $a0))
            (v128.store16_lane 4 (i32.add (local.get $d) (i32.shl (local.get $dstStride) (i32.const 1))) (local.get $a0))
            (v128.store8_lane offset=2 10 (i32.add (local.get $d) (i32.shl (local.get $dstStride) (i32.const 1))) (local.get $a0))
            (v128.store16_lane 6 (i32.add (local.get $d) (i32.mul (local.get $dstStride) (i32.const 3))) (local.get $a0))
            (v128.store8_lane offset=2 14 (i32.add (local.get $d) (i32.mul (local.get $dstStride) (i32.const 3))) (local.get $a0))
            (local.set $d (i32.add (local.get $d) (i32.const 3)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cols_loop)))
        (local.set $y (i32.add (local.get $y) (i32.const 4)))
        (br $rows_loop))))

  ;; Vertical pass over `tmp` (rows of `stride` bytes). Output row i reads rows starts[i].. with
  ;; counts[i] taps. 16 bytes at a time: `stride` is padded up to a multiple of 16 by the caller's
  ;; slack (reads and writes may run up to 15 bytes past a row; later rows overwrite them).
  (func (export "vert")
    (param $tmp i32) (param $stride i32) (param $outH i32)
    (param $starts i32) (param $counts i32) (param $weights i32) (param $ksize i32) (param $dst i32)
    (local $i i32) (local $j i32) (local $t i32) (local $n i32) (local $rowStart i32) (local $wbase i32)
    (local $si i32) (local $wi i32) (local $out i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $v v128) (local $w v128) (local $lo v128) (local $hi v128)
    (local.set $i (i32.const 0))
    (block $rows_done
      (loop $rows_loop
        (br_if $rows_done (i32.ge_u (local.get $i) (local.get $outH)))
        (local.set $n (i32.load (i32.add (local.get $counts) (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $rowStart
          (i32.add (local.get $tmp)
            (i32.mul (i32.load (i32.add (local.get $starts) (i32.shl (local.get $i) (i32.const 2)))) (local.get $stride))))
        (local.set $wbase (i32.add (local.get $weights) (i32.shl (i32.mul (local.get $i) (local.get $ksize)) (i32.const 2))))
        (local.set $out (i32.add (local.get $dst) (i32.mul (local.get $i) (local.get $stride))))
        (local.set $j (i32.const 0))
        (block $cols_done
          (loop $cols_loop
            (br_if $cols_done (i32.ge_u (local.get $j) (local.get $stride)))
            (local.set $a0 (i32x4.splat (i32.const 2097152)))
            (local.set $a1 (local.get $a0))
            (local.set $a2 (local.get $a0))
            (local.set $a3 (local.get $a0))
            (local.set $si (i32.add (local.get $rowStart) (local.get $j)))
            (local.set $wi (local.get $wbase))
            (local.set $t (i32.const 0))
            (block $taps_done
              (loop $taps_loop
                (br_if $taps_done (i32.ge_u (local.get $t) (local.get $n)))
                (local.set $v (v128.load (local.get $si)))
                (local.set $w (i32x4.splat (i32.load (local.get $wi))))
                (local.set $lo (i16x8.extend_low_i8x16_u (local.get $v)))
                (local.set $hi (i16x8.extend_high_i8x16_u (local.get $v)))
                (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (i32x4.extend_low_i16x8_u (local.get $lo)) (local.get $w))))
                (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (i32x4.extend_high_i16x8_u (local.get $lo)) (local.get $w))))
                (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (i32x4.extend_low_i16x8_u (local.get $hi)) (local.get $w))))
                (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (i32x4.extend_high_i16x8_u (local.get $hi)) (local.get $w))))
                (local.set $si (i32.add (local.get $si) (local.get $stride)))
                (local.set $wi (i32.add (local.get $wi) (i32.const 4)))
                (local.set $t (i32.add (local.get $t) (i32.const 1)))
                (br $taps_loop)))
            (v128.store
              (i32.add (local.get $out) (local.get $j))
              (i8x16.narrow_i16x8_u
                (i16x8.narrow_i32x4_u (i32x4.shr_s (local.get $a0) (i32.const 22)) (i32x4.shr_s (local.get $a1) (i32.const 22)))
                (i16x8.narrow_i32x4_u (i32x4.shr_s (local.get $a2) (i32.const 22)) (i32x4.shr_s (local.get $a3) (i32.const 22)))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $cols_loop)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows_loop))))

  ;; RGB24 pixels → three float32 planes through per-channel lookup tables (lut: 3 × 256 float32).
  (func (export "normalize") (param $px i32) (param $lut i32) (param $out i32) (param $plane i32)
    (local $p i32) (local $s i32) (local $o i32) (local $planeBytes i32)
    (local.set $planeBytes (i32.shl (local.get $plane) (i32.const 2)))
    (local.set $p (i32.const 0))
    (local.set $s (local.get $px))
    (local.set $o (local.get $out))
    (block $done
      (loop $loop
        (br_if $done (i32.ge_u (local.get $p) (local.get $plane)))
        (f32.store (local.get $o)
          (f32.load (i32.add (local.get $lut) (i32.shl (i32.load8_u (local.get $s)) (i32.const 2)))))
        (f32.store (i32.add (local.get $o) (local.get $planeBytes))
          (f32.load offset=1024 (i32.add (local.get $lut) (i32.shl (i32.load8_u offset=1 (local.get $s)) (i32.const 2)))))
        (f32.store (i32.add (local.get $o) (i32.shl (local.get $planeBytes) (i32.const 1)))
          (f32.load offset=2048 (i32.add (local.get $lut) (i32.shl (i32.load8_u offset=2 (local.get $s)) (i32.const 2)))))
        (local.set $s (i32.add (local.get $s) (i32.const 3)))
        (local.set $o (i32.add (local.get $o) (i32.const 4)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $loop))))
)
