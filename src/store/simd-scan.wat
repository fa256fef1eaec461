(module
  (memory (export "mem") 1)
  ;; out[i] = dot(q, M[i]) for i in [0, n): q, M, out are byte offsets into memory; dim % 16 == 0.
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
)
