-- Drawing for games (render/gfx_draw.c, render_2d.c, scripts/impetus/draw.lua): the fixture scenes
-- spec/fixtures/draw2d.lua and draw3d.lua are rendered offscreen and their pixels checked where each
-- feature must have drawn (the fixtures' coordinates: 2D camera 90 px per metre, centre (0, 3)).
local helpers = require "helpers"
local impetus = require "impetus"

local function render(fixture, size)
  local dir = helpers.tmpdir()
  local png = dir .. "/shot.png"
  local out, code = helpers.run_host(string.format("--screenshot %s --frames 2 --size %s spec/fixtures/%s", png, size or "1280x720", fixture))
  assert.are.equal(0, code, out)
  local w, h, px = impetus.core.image_load(png)
  os.execute("rm -rf " .. dir)
  return function(x, y)
    local i = (y * w + x) * 4
    return px:byte(i + 1), px:byte(i + 2), px:byte(i + 3)
  end, w, h
end

local function is(pixel, x, y, want, tol, what)
  local r, g, b = pixel(x, y)
  tol = tol or 40
  if math.abs(r - want[1]) > tol or math.abs(g - want[2]) > tol or math.abs(b - want[3]) > tol then
    error(string.format("%s at (%d, %d): got %d,%d,%d, want about %d,%d,%d", what, x, y, r, g, b, want[1], want[2], want[3]), 2)
  end
end

local BG = { 26, 26, 31 }

describe("drawing in screen and world space", function()
  local pixel
  setup(function() pixel = render("draw2d.lua") end)

  it("fills and outlines circles, rotated rectangles and concave polygons on the screen", function()
    is(pixel, 80, 80, { 255, 0, 0 }, 10, "filled circle centre")
    is(pixel, 180, 80, BG, 10, "the outlined circle is hollow")
    is(pixel, 180 + 40, 80, { 0, 255, 0 }, 60, "its 6 px ring")
    is(pixel, 290, 70, { 0, 0, 255 }, 10, "rotated rectangle centre")
    -- turned by 0.5 rad about its centre (290, 70): its unrotated corner (240, 40) is outside it
    is(pixel, 242, 42, BG, 10, "corner cut by the rotation")
    is(pixel, 410, 80, { 255, 255, 0 }, 10, "polygon body")
    is(pixel, 470, 80, BG, 10, "the polygon's notch (concave)")
  end)

  it("draws lines and polylines of a given width", function()
    is(pixel, 570, 80, { 0, 255, 255 }, 40, "the 8 px line's middle")
    -- the line runs along (0.78, 0.62); across it is (-0.62, 0.78)
    is(pixel, 568, 83, { 0, 255, 255 }, 60, "3 px off its axis: inside an 8 px line")
    is(pixel, 565, 86, BG, 20, "8 px off its axis: outside")
  end)

  it("draws text at several sizes and alignments", function()
    local function ink(x0, y0, x1, y1)
      local n = 0
      for y = y0, y1 do for x = x0, x1 do if pixel(x, y) > 150 then n = n + 1 end end end
      return n
    end
    assert.is_true(ink(1000, 40, 1100, 56) > 20, "12 px text")
    assert.is_true(ink(1000, 70, 1150, 100) > 100, "24 px text")
    -- right aligned at x = 1200: ink just left of 1200, none right of it
    assert.is_true(ink(1150, 110, 1199, 150) > 100, "32 px text, right aligned")
    assert.are.equal(0, ink(1202, 110, 1279, 150), "nothing right of the right edge")
    -- centred on x = 640 at y = 170: about as much ink left of the centre as right of it
    local left, right = ink(560, 170, 639, 195), ink(641, 170, 720, 195)
    assert.is_true(left > 30 and right > 30 and math.abs(left - right) < 0.3 * (left + right), "centred text")
  end)

  it("draws images on the screen, scaled", function()
    -- the 32 x 32 checker (8 px squares, red first) at (800, 40) scaled 3 times: 24 px squares
    is(pixel, 800 + 12, 40 + 12, { 255, 40, 40 }, 30, "first square red")
    is(pixel, 800 + 36, 40 + 12, { 40, 40, 255 }, 30, "second square blue")
    is(pixel, 800 + 36, 40 + 36, { 255, 40, 40 }, 30, "diagonal square red")
  end)

  it("draws world shapes, lines and images at their world positions", function()
    -- world (x, y) -> pixel (640 + 90 x, 360 - 90 (y - 3))
    is(pixel, 640, 450, { 255, 0, 255 }, 10, "world circle at (0, 2)")
    is(pixel, 640 + 45, 450, BG, 10, "its edge at r = 0.5 m (45 px)")
    is(pixel, 775, 450, { 0, 204, 77 }, 10, "world rectangle at (1.5, 2)")
    is(pixel, 460, 520, { 77, 153, 255 }, 10, "world triangle")
    -- the world image (1 m = 90 px wide) centred at (0, 5.5): its top-left square is red
    is(pixel, 640 - 45 + 6, 135 - 45 + 6, { 255, 40, 40 }, 40, "world image, top-left")
  end)

  it("draws a sprite that follows a hidden body, and an 8-crate tower of one colour as 8 crates", function()
    -- the crate (alpha 0) at (4, 0.5) turned by 0.3 rad: the sprite is there, the crate is not drawn
    local red, blue, white = 0, 0, 0
    for y = 560, 610 do
      for x = 975, 1025 do
        local r, g, b = pixel(x, y)
        if r > 200 and b < 80 then red = red + 1 elseif b > 200 and r < 80 then blue = blue + 1 end
        if r > 200 and g > 200 and b > 200 then white = white + 1 end
      end
    end
    assert.is_true(red > 400 and blue > 400, "the checker sprite: " .. red .. " red, " .. blue .. " blue pixels")
    assert.are.equal(0, white, "the white crate itself is hidden")
    -- the tower at x = -5 (pixel 190): crates 0.5 m = 45 px high; their joints are darker lines
    local joints, faces = 0, 0
    for y = 290, 620 do
      local rr = pixel(190, y)
      if rr < 110 then joints = joints + 1 elseif rr > 130 then faces = faces + 1 end
    end
    assert.is_true(faces > 250, "crate faces")
    assert.is_true(joints >= 7 and joints <= 40, "the outlines between the crates: " .. joints .. " dark pixels")
  end)

  it("draws the ground plane as the solid half-plane in 2D", function()
    is(pixel, 640, 700, { 92, 97, 105 }, 30, "below y = 0: the plane")
    is(pixel, 640, 600, BG, 10, "above it: background")
  end)

  it("refuses bad drawing arguments with clear errors", function()
    local dir = helpers.tmpdir()
    for _, case in ipairs {
      { "g.circle(1, 2, 3, { colour = {1, 0, 0} })", "gfx.circle: unknown option 'colour'" },
      { "g.polygon({ 1, 2, 3 })", "gfx.polygon: argument 'points' must hold x, y pairs" },
      { "g.text(1, 2, 'x', { align = 'top' })", "gfx.text: option 'align' must be" },
      { "g.draw({}, 1, 2)", "gfx.draw: argument 1 must be an Image" },
      { "g.line({0, 0}, {1, 0/0})", "gfx.line: argument 'b' must be a point" },
      { "g.sprite(nil, 5)", "gfx.sprite: argument 2 must be a Body" },
    } do
      helpers.write(dir .. "/bad.lua", "return { draw = function(world, g) " .. case[1] .. " end }")
      local out, code = helpers.run_host("--screenshot " .. dir .. "/bad.png --frames 1 " .. dir .. "/bad.lua")
      assert.are_not.equal(0, code, case[1])
      assert.matches(case[2], out, 1, true)
    end
    os.execute("rm -rf " .. dir)
  end)

  it("refuses stray entries in colours, points and pairs, and arguments beyond those a call takes", function()
    -- one host run: the scene tries every case under pcall and prints what each said
    local cases = {
      { "g.circle(1, 2, 3, {}, 5)", "gfx.circle(x, y, r [, opts]): unexpected argument #5 (number)" },
      { "g.circle({0, 0}, 1, {}, 5)", "gfx.circle(center, r [, opts]): unexpected argument #4 (number)" },
      { "g.circle(1, 2, 3, { color = {1, 0, 0, 1, 1} })", "gfx.circle: option 'color' must be a colour {r, g, b[, a]}: unexpected entry [5]" },
      { "g.circle(1, 2, 3, { outline = {1, 0, 0, bogus = 1} })", "gfx.circle: option 'outline' must be a colour {r, g, b[, a]}: unknown field 'bogus'" },
      { "g.circle(1, 2, 3, {1, 0, 0, 1, 1})", "gfx.circle: argument 'color' must be a colour {r, g, b[, a]}: unexpected entry [5]" },
      { "g.circle({0, 0, 0, 1}, 1)", "gfx.circle: argument 'center' must be a point {x, y[, z]}: unexpected entry [4]" },
      { "g.circle({0, 0}, 1, { normal = {0, 0, 1, bogus = 1} })", "gfx.circle: option 'normal' must be a point {x, y[, z]}: unknown field 'bogus'" },
      { "g.rectangle(1, 2, 3, 4, {}, 1)", "gfx.rectangle(x, y, w, h [, opts]): unexpected argument #6 (number)" },
      { "g.polygon({0, 0, 1, 0, 0, 1, closed = true})", "gfx.polygon: argument 'points' must be a list: unknown field 'closed'" },
      { "g.polygon({{0, 0}, {1, 0}, {0, 1, w = 1}})", "gfx.polygon: each point must be a point {x, y[, z]}: unknown field 'w'" },
      { "g.line(0, 0, 1, 1, {}, 3)", "gfx.line(x1, y1, x2, y2 [, opts]): unexpected argument #6 (number)" },
      { "g.text(1, 2, 'x', {}, 4)", "gfx.text(x, y, s [, opts]): unexpected argument #5 (number)" },
      { "g.text_width('x', 16, 3)", "gfx.text_width(s [, size]): unexpected argument #3 (number)" },
      { "g.draw(img, 1, 2, { origin = {0, 0, 3} })", "gfx.draw: option 'origin' must be a pair {a, b}: unexpected entry [3]" },
      { "g.draw(img, 1, 2, { scale = {1, 1, sz = 1} })", "gfx.draw: option 'scale' must be a pair {a, b}: unknown field 'sz'" },
      { "g.draw(img, {0, 0}, { size = {1, 2, 3} })", "gfx.draw: option 'size' must be a pair {a, b}: unexpected entry [3]" },
      { "g.image_quad(img, {{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}})", "gfx.image_quad: argument 'corners' must be a list of 4 corners: unexpected entry [5]" },
      { "g.sprite(img, body, { offset = {1, 0, 0} })", "gfx.sprite: option 'offset' must be {x, y}: unexpected entry [3]" },
      { "g.sprite(img, body, {}, 1)", "gfx.sprite(image, body [, opts]): unexpected argument #4 (number)" },
      { "g.image(path, 1)", "gfx.image(path): unexpected argument #2 (number)" },
      { "g.rect(1, 2, 3, 4, {1, 0, 0}, 5)", "gfx.rect(x, y, w, h [, color]): unexpected argument #6 (number)" },
      { "g.sphere({0, 0, 0}, 1, {1, 0, 0}, 5)", "gfx.sphere(center, r [, color]): unexpected argument #4 (number)" },
      { "g.box({0, 0, 0}, {1, 1, 1, 1})", "gfx.box: argument 'half' must be a vector {x, y, z}: unexpected entry [4]" },
      { "g.project({0, 0, 0}, 1)", "gfx.project(p): unexpected argument #2 (number)" },
      { "g.size(1)", "gfx.size(): unexpected argument #1 (number)" },
    }
    local dir = helpers.tmpdir()
    local lines = { "local cases = {" }
    for _, c in ipairs(cases) do lines[#lines + 1] = string.format("  %q,", c[1]) end
    lines[#lines + 1] = "}"
    lines[#lines + 1] = [[
      local done = false
      return {
        setup = function(world) body = world:box { position = { 0, 1, 0 } } end,
        draw = function(world, g)
          if done then return end
          done = true
          path = os.tmpname() .. ".png"
          g.write_png(path, 2, 2, string.rep("\255\0\0\255", 4))
          img = g.image(path)
          for i, src in ipairs(cases) do
            local ok, err = pcall(load("local g = ... " .. src, "case", "t", _ENV), g)
            print(string.format("case %d %s %s", i, ok and "accepted" or "refused", ok and "" or tostring(err)))
          end
          os.remove(path)
        end,
      }]]
    helpers.write(dir .. "/probe.lua", table.concat(lines, "\n"))
    local out, code = helpers.run_host("--screenshot " .. dir .. "/probe.png --frames 1 " .. dir .. "/probe.lua")
    assert.are.equal(0, code, out)
    for i, c in ipairs(cases) do
      local line = out:match("case " .. i .. " ([^\n]*)")
      assert.is_not_nil(line, "case " .. i .. " ran: " .. out)
      assert.matches("^refused", line, nil, false, c[1] .. " was accepted")
      assert.matches(c[2], line, 1, true)
    end
    os.execute("rm -rf " .. dir)
  end)
end)

describe("the 2D grid", function()
  it("covers the view wherever the camera looks", function()
    local pixel = render("grid_far.lua")
    -- the brightest red of the pixels x - 1 .. x + 1 (a line on a pixel boundary lands on either side)
    local function near_line(x, y)
      local best = 0
      for dx = -1, 1 do best = math.max(best, (pixel(x + dx, y))) end
      return best
    end
    -- x = 45 m (a major line) falls between pixels 459 and 460 (640 + (45 - 48) 60); x = 49 m (minor) at 700
    local r = near_line(460, 100)
    assert.is_true(r > 70, "the grid line at x = 45 m is drawn (red " .. r .. ")")
    r = near_line(700, 130)
    assert.is_true(r > 45, "the minor line at x = 49 m is drawn (red " .. r .. ")")
    is(pixel, 490, 100, BG, 12, "between the lines")
  end)
end)

describe("drawing in 3D", function()
  local pixel
  setup(function() pixel = render("draw3d.lua") end)

  it("casts the shadow of the key light on the ground", function()
    -- ground just right of the tower's base, in its shadow, against open ground further right
    local shadow = { pixel(700, 405) }
    local lit = { pixel(1000, 405) }
    assert.is_true(shadow[1] + shadow[2] + shadow[3] < 0.6 * (lit[1] + lit[2] + lit[3]),
      string.format("shadow %d,%d,%d against lit ground %d,%d,%d", shadow[1], shadow[2], shadow[3], lit[1], lit[2], lit[3]))
  end)

  it("outlines the boxes of a tower of one colour", function()
    local dark = 0
    for y = 215, 445 do if pixel(640, y) < pixel(640, 250) * 0.8 then dark = dark + 1 end end
    assert.is_true(dark >= 3, "dark joints between the 4 boxes: " .. dark)
  end)

  it("draws world shapes and wide lines into the scene, and labels at world points", function()
    is(pixel, 808, 440, { 255, 51, 51 }, 30, "the red disc on the ground at (3, 0, 0)")
    local r, g, b = pixel(463, 344)
    assert.is_true(r > 200 and g > 200 and b < 80, string.format("the yellow 6 px line: %d,%d,%d", r, g, b))
    local ink = 0
    for y = 170, 195 do for x = 560, 720 do if pixel(x, y) > 200 then ink = ink + 1 end end end
    assert.is_true(ink > 100, "the label above the tower")
  end)
end)
