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

-- issue 20, the host: nothing a scene's settings or loops do may freeze or crash the host
describe("the host under hostile scenes", function()
  local Runner = require "impetus.runner"
  local run = require "impetus.run"
  local dir
  before_each(function() dir = helpers.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  local function start(src)
    helpers.write(dir .. "/scene.lua", src)
    local r = Runner.new(dir .. "/scene.lua")
    r:start()
    return r
  end

  it("shows bad settings as clear errors naming the field", function()
    for _, case in ipairs {
      { "background = 'red'", "scene.background must be a colour {r, g, b[, a]} with numbers in 0..1 (got string \"red\")" },
      { "title = {}", "scene.title must be a string (got table)" },
      { "camera = { eye = {1, 2, 3}, target = {1, 2, 3} }", "scene.camera: field 'eye' equals field 'target'" },
      { "dt = 'abc'", "scene.dt must be a number of seconds > 0 and <= 1 (got string \"abc\")" },
      { "dt = 0/0", "scene.dt must be a number of seconds > 0 and <= 1" },
      { "dt = -1", "scene.dt must be a number of seconds > 0 and <= 1" },
      { "backgroud = {0, 0, 0}", "scene: unknown setting 'backgroud' (did you mean 'background'?)" },
      { "keypresed = function() end", "scene.keypresed is not a callback: did you mean 'keypressed'?" },
      { "camera = { mode = '2d', height = -3 }", "scene.camera: field 'height' must be a number > 0" },
      { "viewer = { hud = 'no' }", "scene.viewer.hud must be true or false" },
      { "keys = { 'space' }", "scene.keys[1] must be a pair of strings" },
      { "debug = { contact = true }", "scene.debug: unknown view 'contact'" },
      { "background = { 0.1, 0.1, 0.1, 1, 1 }", "scene.background must be a colour {r, g, b[, a]}: unexpected entry [5]" },
      { "background = { 0.1, 0.1, 0.1, a = 1 }", "scene.background must be a colour {r, g, b[, a]}: unknown field 'a'" },
      { "keys = { { 'f', 'fire', 'loud' } }", "scene.keys[1] must be a pair of strings {\"space\", \"fire\"}: unexpected entry [3]" },
      { "keys = { { 'f', 'fire' }, extra = { 'g', 'go' } }", "scene.keys must be a list of {key, what it does} pairs: unknown field 'extra'" },
      { "camera = { eye = { 0, 2, 9, 1 } }", "scene.camera: field 'eye' must be a vector {x, y, z}: unexpected entry [4]" },
    } do
      local r = start("return { " .. case[1] .. ", setup = function(w) w:particle{} end }")
      assert.is_truthy(r.error, case[1])
      assert.matches(case[2], r.error, 1, true)
      assert.is_nil(r.world, "no world for a scene that did not load")
    end
    -- a scene's own helper functions are fine
    local r = start("return { build_level = function() end, ragdoll = function() end }")
    assert.is_nil(r.error)
  end)

  it("refuses a runner's unknown or malformed options by name", function()
    helpers.write(dir .. "/scene.lua", "return {}")
    local path = dir .. "/scene.lua"
    for _, case in ipairs {
      { { viewr = true }, "runner: unknown option 'viewr' (known: dt, max_steps_per_frame, size, viewer, seed, history, sources)" },
      { { size = { 800, 600, 1 } }, "runner: option 'size' must be {width, height} in whole pixels >= 1" },
      { { size = { 800.5, 600 } }, "runner: option 'size' must be {width, height} in whole pixels >= 1" },
      { { max_steps_per_frame = 0 }, "runner: option 'max_steps_per_frame' must be a whole number >= 1" },
      { "fast", "runner: argument 'opts' must be a table" },
    } do
      local ok, err = pcall(Runner.new, path, case[1])
      assert.is_false(ok, case[2])
      assert.matches(case[2], tostring(err), 1, true)
    end
    local r = Runner.new(path, { size = { 800, 600 }, max_steps_per_frame = 4 })
    assert.are.same({ 800, 600 }, { r.input.width, r.input.height })
  end)

  it("prints the scene's own error for a scene that never loaded, also with --screenshot", function()
    helpers.write(dir .. "/bad.lua", "return { background = 'red' }")
    helpers.write(dir .. "/syntax.lua", "return { setup = function(w) end")
    for _, args in ipairs {
      "--screenshot " .. dir .. "/x.png --frames 2 " .. dir .. "/bad.lua",
      "--headless --steps 5 " .. dir .. "/bad.lua",
      "--bench --steps 5 " .. dir .. "/bad.lua",
    } do
      local out, code = helpers.run_host(args)
      assert.are.equal(1, code, out)
      assert.matches("scene.background must be a colour", out, 1, true)
      assert.is_nil(out:find("attempt to index a nil value", 1, true), out)
    end
    -- the no-display fallback of `impetus scene.lua`
    local out, code = helpers.run_host(dir .. "/syntax.lua", "-u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER")
    assert.are.equal(1, code, out)
    assert.matches("syntax error", out)
    assert.is_nil(out:find("attempt to index", 1, true), out)
    os.execute("rm -f impetus-syntax.png")
  end)

  it("caps catch-up work: dt = 1e-300 neither freezes the frame loop nor hides that it falls behind", function()
    local r = start("return { dt = 1e-300, setup = function(w) w:particle{} end }")
    assert.is_nil(r.error)
    local n = r:advance(1 / 60)
    assert.is_true(n >= 8 and n <= 1000, "steps in one frame: " .. n)
    assert.is_truthy(r.behind, "the loop says it fell behind")
    assert.is_true(r.behind.ratio < 1e-290, "simulated / wall time: " .. r.behind.ratio)
    -- a slow scene: the wall budget stops the frame long before its step cap
    r = start([[return { dt = 1e-4, update = function() local t = os.clock() while os.clock() - t < 0.002 do end end }]])
    local t0 = os.clock()
    n = r:advance(0.05, 0.02)
    assert.is_true(os.clock() - t0 < 0.2, "the frame kept to its budget")
    assert.is_true(n < 50, "steps: " .. n)
    assert.is_truthy(r.behind)
    -- and the real host, offscreen, ends (a hang would be killed by timeout: status 124)
    helpers.write(dir .. "/tiny.lua", "return { dt = 1e-300, setup = function(w) w:particle{} end }")
    local out, code = helpers.sh(string.format("cd %q && timeout 60 env IMPETUS_ROOT=%q %q --screenshot %s/t.png --frames 30 %s/tiny.lua",
      helpers.root, helpers.root, helpers.host, dir, dir))
    assert.are.equal(0, code, out)
  end)

  it("refuses a bad --dt", function()
    for _, v in ipairs { "nan", "0", "-1", "abc", "inf" } do
      local out, code = helpers.run_host("--headless --dt " .. v .. " scenes/fountain.lua")
      assert.are_not.equal(0, code, v)
      assert.matches("impetus: --dt must be a number of seconds > 0 and <= 1", out, 1, true)
    end
  end)

  it("keeps per-step records bounded in long runs", function()
    local r = start("return { setup = function(w) end }")
    collectgarbage()
    local before = collectgarbage("count")
    local stats = run.timed_steps(r, 200000)
    collectgarbage()
    local grown = collectgarbage("count") - before
    assert.are.equal(200000, stats.n)
    assert.is_true(#stats.samples <= 4096, "samples kept: " .. #stats.samples)
    assert.is_true(grown < 512, string.format("Lua memory grew by %.0f KiB over 200000 steps", grown))
    assert.is_true(stats.min <= stats:median() and stats:median() <= stats.max)
  end)

  it("quits on SIGTERM in a window even while a callback loops swallowing errors", function()
    -- the loop marks a file as it starts, and the TERM is sent then: however long the start-up takes
    -- (GL, the module, a sanitized build on a busy machine), it lands inside the looping callback
    local mark = dir .. "/spin.started"
    os.remove(mark)
    helpers.write(dir .. "/spin.lua", string.format([[
require("impetus.guard").limit = 600 -- the TERM, not the CPU watchdog, is what ends this loop
return { update = function(world)
  local f = io.open(%q, "w") f:close()
  while true do pcall(function() end) end
end }]], mark))
    local out = helpers.sh(string.format([[
cd %q
env IMPETUS_ROOT=%q SDL_VIDEODRIVER=offscreen SDL_AUDIODRIVER=dummy %q --size 320x240 %s/spin.lua > %s/spin.out 2>&1 &
pid=$!
for i in $(seq 1 3000); do [ -f %q ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done
[ -f %q ] || echo "the loop never started"
sleep 0.5
start=$(date +%%s)
kill -TERM $pid
for i in $(seq 1 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then kill -KILL $pid; echo "still running 30 s after the TERM"; fi
wait $pid
echo "quit after $(( $(date +%%s) - start )) s"
cat %s/spin.out]], helpers.root, helpers.root, helpers.host, dir, dir, mark, mark, dir))
    assert.is_nil(out:find("the loop never started", 1, true), out)
    assert.is_nil(out:find("still running", 1, true), out)
    assert.matches("interrupted: the host is quitting %(signal 15%)", out)
    local secs = tonumber(out:match("quit after (%d+) s"))
    assert.is_true(secs ~= nil and secs < 15, "it quit promptly: " .. out)
  end)
end)

describe("the HUD", function()
  local Runner = require "impetus.runner"
  local Viewer = require "impetus.viewer"

  local function drawn_text(r, info)
    local texts = {}
    local gfx = {
      size = function() return 1280, 720 end, line_height = function() return 16 end,
      text_width = function(s) return 8 * #s end, rect = function() end, line = function() end,
      text = function(x, y, s) texts[#texts + 1] = s end,
    }
    r.viewer:draw(gfx, info)
    return table.concat(texts, "\n")
  end

  it("shows no fps when none was measured (offscreen), and real fps in a window", function()
    local dir = helpers.tmpdir()
    helpers.write(dir .. "/s.lua", "return { title = 'hud test' }")
    local r = Runner.new(dir .. "/s.lua")
    r:start()
    Viewer.new(r)
    local t = drawn_text(r, { title = "hud test", step_ms = 0.5 })
    assert.matches("hud test", t, 1, true)
    assert.is_nil(t:find("fps", 1, true), t)
    assert.matches("58 fps", drawn_text(r, { title = "hud test", step_ms = 0.5, fps = 58 }), 1, true)
    local out = helpers.run_host("--screenshot " .. dir .. "/s.png --frames 2 " .. dir .. "/s.lua")
    assert.is_nil(out:find("0 fps", 1, true))
    os.execute("rm -rf " .. dir)
  end)

  it("is hidden under the error screen", function()
    local dir = helpers.tmpdir()
    helpers.write(dir .. "/s.lua", "return { title = 'hud test', update = function() error('kaboom') end }")
    local r = Runner.new(dir .. "/s.lua")
    r:start()
    Viewer.new(r)
    r:step()
    local t = drawn_text(r, { title = "hud test", step_ms = 0.5, fps = 60 })
    assert.matches("kaboom", t, 1, true)
    assert.is_nil(t:find("hud test", 1, true), "the HUD's title is not drawn: " .. t)
    assert.is_nil(t:find("F1: help", 1, true))
    os.execute("rm -rf " .. dir)
  end)
end)
