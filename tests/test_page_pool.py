"""conftest.PagePool: a page handed out again is as a new one would be, or is not handed out again."""
import pytest

pytestmark = pytest.mark.browser

OPTIONS = {"offline": True, "viewport": {"width": 700, "height": 500}, "color_scheme": "dark"}
MEDIA = "() => [matchMedia('print').matches, matchMedia('(prefers-color-scheme: dark)').matches, innerWidth, innerHeight]"


def test_a_page_comes_back_without_the_last_tests_listeners_routes_media_viewport_or_network(page_pool):
    page = page_pool.take(**OPTIONS)
    heard = []
    page.on("console", lambda m: heard.append(m.text))
    page.route("**/*", lambda route: route.abort())
    page.emulate_media(media="print", color_scheme="light")
    page.set_viewport_size({"width": 300, "height": 300})
    page.context.set_offline(False)
    page.set_content("<p>x</p>")
    page_pool.give(page)

    again = page_pool.take(**OPTIONS)
    assert again is page  # the pool reuses it (else this test proves nothing)
    assert again.url == "about:blank"
    assert again.evaluate(MEDIA) == [False, True, 700, 500]
    again.evaluate("console.log('after')")
    assert heard == []
    assert again.context.pages == [again]
    assert again.evaluate("navigator.onLine") is False
    page_pool.give(again)


@pytest.mark.parametrize("spoil", ["add_init_script", "set_default_timeout"])
def test_a_page_changed_for_good_is_closed_not_handed_out(page_pool, spoil):
    page = page_pool.take(**OPTIONS)
    getattr(page, spoil)(*{"add_init_script": ["window.spoilt = 1"], "set_default_timeout": [1000]}[spoil])
    page_pool.give(page)
    assert page.is_closed()
    fresh = page_pool.take(**OPTIONS)
    assert fresh is not page
    fresh.goto("data:text/html,<p>x</p>")
    assert fresh.evaluate("window.spoilt") is None
    page_pool.give(fresh)


def test_other_options_get_another_page(page_pool):
    page = page_pool.take(**OPTIONS)
    page_pool.give(page)
    other = page_pool.take(**{**OPTIONS, "color_scheme": "light"})
    assert other is not page and other.evaluate(MEDIA)[1] is False
    page_pool.give(other)
