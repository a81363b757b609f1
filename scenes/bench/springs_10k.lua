-- scenes/bench/springs_10k.lua: 10,000 particles joined by 30,000 damped springs, RK4.
-- A 100 x 100 sheet: structural springs along rows and columns plus one diagonal per cell
-- (9,900 + 9,900 + 9,801), then 399 bend springs two particles long make 30,000.
-- Run: ./impetus bench scenes/bench/springs_10k.lua
return {
  title = "10k particles, 30k springs, RK4",
  camera = { eye = { 6, 8, 14 }, target = { 0, 2, 0 } },
  setup = function(world)
    world.integrator = "rk4"
    world.drag = 0.01
    local n, s = 100, 0.08
    local p = {}
    for i = 0, n - 1 do
      for j = 0, n - 1 do
        p[i * n + j] = world:particle { position = { (i - n / 2) * s, 4, (j - n / 2) * s }, mass = 0.01, radius = 0.03,
          fixed = (j == n - 1 and (i == 0 or i == n - 1)) }
      end
    end
    local count = 0
    local function spring(a, b)
      world:spring(a, b, { ks = 30, kd = 0.02 })
      count = count + 1
    end
    for i = 0, n - 1 do
      for j = 0, n - 1 do
        if i + 1 < n then spring(p[i * n + j], p[(i + 1) * n + j]) end
        if j + 1 < n then spring(p[i * n + j], p[i * n + j + 1]) end
        if i + 1 < n and j + 1 < n then spring(p[i * n + j], p[(i + 1) * n + j + 1]) end
      end
    end
    for i = 0, n - 3 do
      for j = 0, n - 1 do
        if count < 30000 then spring(p[i * n + j], p[(i + 2) * n + j]) end
      end
    end
    assert(count == 30000, "expected 30,000 springs, made " .. count)
  end,
}
