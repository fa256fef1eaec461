(module
  (memory (export "mem") 1)
  ;; out[i] = dot(q, M[i]) for i in [0, n): the exact f32 scan (the reference the int8 index is
  ;; measured against). q, M, out are byte offsets into memory; dim % 16 == 0.
  (func (export "scan") (param $q i32) (param $m i32) (param $n i32) (param $dim i32) (param $out i32)
    (local $i i32) (local $j i32) (local $row i32) (local $bytes i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $qa i32) (local $ra i32)
    (local.set $bytes (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $row (local.get $m))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $a0 (v128.const f32x4 0 0 0 0))
        (local.set $a1 (v128.const f32x4 0 0 0 0))
        (local.set $a2 (v128.const f32x4 0 0 0 0))
        (local.set $a3 (v128.const f32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (block $jd
          (loop $cols
            (br_if $jd (i32.ge_u (local.get $j) (local.get $bytes)))
            (local.set $qa (i32.add (local.get $q) (local.get $j)))
            (local.set $ra (i32.add (local.get $row) (local.get $j)))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (v128.load (local.get $ra)) (v128.load (local.get $qa)))))
            (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (v128.load offset=16 (local.get $ra)) (v128.load offset=16 (local.get $qa)))))
            (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (v128.load offset=32 (local.get $ra)) (v128.load offset=32 (local.get $qa)))))
            (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (v128.load offset=48 (local.get $ra)) (v128.load offset=48 (local.get $qa)))))
            (local.set $j (i32.add (local.get $j) (i32.const 64)))
            (br $cols)))
        (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
        (f32.store
          (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
            (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows))))
  ;; out[i] = scale[i] * dot(q, M[i]) for i in [0, n): the approximate scan of an int8-quantised
  ;; index. q is int16 (the quantised query, widened once), M rows are int8, `stride` bytes apart
  ;; (stride % 16 == 0, rows zero-padded), scale and out are f32. Per 16 bytes of a row: two
  ;; 8-lane loads that widen int8 to int16, each multiplied with the query and summed pairwise
  ;; into i32 lanes (i32x4.dot_i16x8_s). |q|, |M| <= 127 keep every sum far from i32 overflow.
  (func (export "scan_i8") (param $q i32) (param $m i32) (param $n i32) (param $stride i32) (param $scale i32) (param $out i32)
    (local $i i32) (local $j i32) (local $row i32) (local $a0 v128) (local $a1 v128) (local $qa i32) (local $ra i32)
    (local.set $row (local.get $m))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (block $jd
          (loop $cols
            (br_if $jd (i32.ge_u (local.get $j) (local.get $stride)))
            (local.set $ra (i32.add (local.get $row) (local.get $j)))
            (local.set $qa (i32.add (local.get $q) (i32.shl (local.get $j) (i32.const 1))))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.dot_i16x8_s (v128.load8x8_s (local.get $ra)) (v128.load (local.get $qa)))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.dot_i16x8_s (v128.load8x8_s offset=8 (local.get $ra)) (v128.load offset=16 (local.get $qa)))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $cols)))
        (local.set $a0 (i32x4.add (local.get $a0) (local.get $a1)))
        (f32.store
          (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
          (f32.mul
            (f32.load (i32.add (local.get $scale) (i32.shl (local.get $i) (i32.const 2))))
            (f32.convert_i32_s
              (i32.add
                (i32.add (i32x4.extract_lane 0 (local.get $a0)) (i32x4.extract_lane 1 (local.get $a0)))
                (i32.add (i32x4.extract_lane 2 (local.get $a0)) (i32x4.extract_lane 3 (local.get $a0)))))))
        (local.set $row (i32.add (local.get $row) (local.get $stride)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows))))
  ;; Quantises one f32 row for scan_i8: M[j] = round(x[j] * 127 / max|x|) as int8, for j < stride
  ;; (x is `stride` floats, zero-padded; stride % 16 == 0). Writes max|x| and |x|^2 (f32) at `info`.
  (func (export "quantise_i8") (param $x i32) (param $stride i32) (param $dst i32) (param $info i32)
    (local $j i32) (local $end i32) (local $mx v128) (local $sq v128) (local $v v128) (local $max f32) (local $inv v128)
    (local.set $end (i32.add (local.get $x) (i32.shl (local.get $stride) (i32.const 2))))
    (local.set $j (local.get $x))
    (block $d1
      (loop $l1
        (br_if $d1 (i32.ge_u (local.get $j) (local.get $end)))
        (local.set $v (v128.load (local.get $j)))
        (local.set $mx (f32x4.max (local.get $mx) (f32x4.abs (local.get $v))))
        (local.set $sq (f32x4.add (local.get $sq) (f32x4.mul (local.get $v) (local.get $v))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $l1)))
    (local.set $max
      (f32.max
        (f32.max (f32x4.extract_lane 0 (local.get $mx)) (f32x4.extract_lane 1 (local.get $mx)))
        (f32.max (f32x4.extract_lane 2 (local.get $mx)) (f32x4.extract_lane 3 (local.get $mx)))))
    (f32.store (local.get $info) (local.get $max))
    (f32.store offset=4 (local.get $info)
      (f32.add
        (f32.add (f32x4.extract_lane 0 (local.get $sq)) (f32x4.extract_lane 1 (local.get $sq)))
        (f32.add (f32x4.extract_lane 2 (local.get $sq)) (f32x4.extract_lane 3 (local.get $sq)))))
    (if (f32.gt (local.get $max) (f32.const 0))
      (then (local.set $inv (f32x4.splat (f32.div (f32.const 127) (local.get $max))))))
    (local.set $j (local.get $x))
    (block $d2
      (loop $l2
        (br_if $d2 (i32.ge_u (local.get $j) (local.get $end)))
        (v128.store (local.get $dst)
          (i8x16.narrow_i16x8_s
            (i16x8.narrow_i32x4_s
              (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.mul (v128.load (local.get $j)) (local.get $inv))))
              (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.mul (v128.load offset=16 (local.get $j)) (local.get $inv)))))
            (i16x8.narrow_i32x4_s
              (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.mul (v128.load offset=32 (local.get $j)) (local.get $inv))))
              (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.mul (v128.load offset=48 (local.get $j)) (local.get $inv)))))))
        (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
        (local.set $j (i32.add (local.get $j) (i32.const 64)))
        (br $l2))))
)
