-- The host program: headless runs, offscreen screenshots, command-line errors.
local helpers = require "helpers"
local impetus = require "impetus"

describe("the host", function()
  it("runs a scene headless and prints a summary", function()
    local out, code = helpers.run_host("--headless --steps 120 scenes/fountain.lua")
    assert.are.equal(0, code, out)
    assert.matches("steps: 120", out)
    assert.matches("simulated time: 2%.0000 s", out)
    assert.matches("wall: [%d.]+ ms/step", out)
    local n = tonumber(out:match("particles: (%d+)"))
    assert.is_true(n > 100, "the fountain should be spraying: " .. out)
  end)

  it("reports a broken scene with a traceback and a non-zero status", function()
    local dir = helpers.tmpdir()
    helpers.write(dir .. "/bad.lua", "return { setup = function(world) world:particle{ mass = -2 } end }")
    local out, code = helpers.run_host("--headless --steps 10 " .. dir .. "/bad.lua")
    assert.are_not.equal(0, code)
    assert.matches("field 'mass' must be > 0", out)
    assert.matches("stack traceback", out)
    os.execute("rm -rf " .. dir)
  end)

  it("refuses unknown options and missing files", function()
    local out, code = helpers.run_host("--frobnicate scenes/fountain.lua")
    assert.are_not.equal(0, code)
    assert.matches("unknown option %-%-frobnicate", out)
    out, code = helpers.run_host("--headless no/such/scene.lua")
    assert.are_not.equal(0, code)
    assert.matches("cannot open scene", out)
  end)

  it("runs a folder's main.lua", function()
    local dir = helpers.tmpdir()
    helpers.write(dir .. "/main.lua", "return { title = 'folder game', setup = function(w) w:particle{} end }")
    local out, code = helpers.run_host("--headless --steps 5 " .. dir .. "/")
    assert.are.equal(0, code, out)
    assert.matches("scene: folder game", out)
    os.execute("rm -rf " .. dir)
  end)

  it("renders a known scene offscreen to a PNG with the right colours in the right places", function()
    local dir = helpers.tmpdir()
    helpers.write(dir .. "/known.lua", [[
return {
  title = "known",
  camera = { eye = {0, 0, 6}, target = {0, 0, 0} },
  background = {0, 0, 1},
  grid = false,
  setup = function(world)
    world.gravity = {0, 0, 0}
    world:particle{ position = {0, 0, 0}, radius = 1, color = {1, 0, 0, 1} }
    world:particle{ position = {2.2, 0, 0}, radius = 0.5, color = {0, 1, 0, 1} }
  end,
}]])
    local png = dir .. "/known.png"
    local out, code = helpers.run_host(string.format("--screenshot %s --frames 2 --size 320x240 %s/known.lua", png, dir))
    assert.are.equal(0, code, out)
    assert.matches("screenshot: " .. png:gsub("%p", "%%%0"), out)
    local w, h, px = impetus.core.image_load(png)
    assert.are.equal(320, w)
    assert.are.equal(240, h)
    local function pixel(x, y)
      local i = (y * w + x) * 4
      return px:byte(i + 1), px:byte(i + 2), px:byte(i + 3)
    end
    -- the red sphere at the centre: red dominates
    local r, g, b = pixel(160, 120)
    assert.is_true(r > 120 and g < 60 and b < 60, string.format("centre pixel %d,%d,%d", r, g, b))
    -- the green sphere to the right of it (x = 2.2 m projects right of centre)
    local gx = 160 + math.floor(2.2 / (6 * math.tan(0.45)) * 120 + 0.5)
    r, g, b = pixel(gx, 120)
    assert.is_true(g > 100 and r < 80, string.format("green sphere pixel at %d: %d,%d,%d", gx, r, g, b))
    -- the background in the bottom-right corner is the scene's blue
    r, g, b = pixel(315, 235)
    assert.are.same({ 0, 0, 255 }, { r, g, b })
    os.execute("rm -rf " .. dir)
  end)
end)
