-- scenes/jelly.lua: a soft jelly block, a 5 x 5 x 5 lattice of particles joined by damped springs
-- to every neighbour (edges, face and body diagonals), dropped tumbling onto the ground.
-- Drag it with the mouse. Keys: J throws it up again.
local N, S = 5, 0.25     -- particles per side, spacing (m)
local jelly = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)

local function throw(world)
  for _, p in ipairs(jelly.block) do
    local x = p.position
    p.velocity = { 1.5 - 0.4 * x[2], 7, 0.8 * x[1] }
  end
end

return {
  title = "Jelly block (springs)",
  keys = { { "j", "throw the jelly" } },
  dt = 1 / 240,                       -- stiff lattice: explicit RK4 wants a small step
  camera = { eye = { 4, 3, 5 }, target = { 0, 0.6, 0 } },

  setup = function(world)
    world.integrator = "rk4"
    world.drag = 0.01
    world:plane { restitution = 0.2, friction = 0.8 }
    jelly.block = {}
    local grid = {}
    for i = 0, N - 1 do
      for j = 0, N - 1 do
        for k = 0, N - 1 do
          local p = world:particle {
            position = { (i - 2) * S, 1.2 + j * S + 0.1 * i, (k - 2) * S },
            mass = 0.1, radius = 0.05,
            color = { 0.35 + 0.12 * i, 0.85 - 0.1 * j, 0.4 + 0.1 * k, 1 },
          }
          grid[(i * N + j) * N + k] = p
          jelly.block[#jelly.block + 1] = p
        end
      end
    end
    -- one spring to each neighbour within a body diagonal, counted once
    for i = 0, N - 1 do
      for j = 0, N - 1 do
        for k = 0, N - 1 do
          for di = -1, 1 do
            for dj = -1, 1 do
              for dk = -1, 1 do
                local a, b = (i * N + j) * N + k, ((i + di) * N + (j + dj)) * N + (k + dk)
                if b > a and i + di >= 0 and i + di < N and j + dj >= 0 and j + dj < N and k + dk >= 0 and k + dk < N then
                  world:spring(grid[a], grid[b], { ks = 300, kd = 0.3 })
                end
              end
            end
          end
        end
      end
    end
    for _, p in ipairs(jelly.block) do p.velocity = { 0.5, 0, 0 } end
  end,

  keypressed = function(world, key)
    if key == "j" then throw(world) end
  end,

  draw = function(world, gfx)
    local _, h = gfx.size()
    gfx.text(16, h - 30, "J: throw the block   drag a particle with the mouse", { 0.8, 0.8, 0.8, 1 })
  end,
}
