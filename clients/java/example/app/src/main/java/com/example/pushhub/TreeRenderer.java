package com.example.pushhub;

import android.content.Context;
import android.view.View;
import android.widget.Button;
import android.widget.LinearLayout;
import android.widget.ScrollView;
import android.widget.TextView;
import io.pushhub.client.Json;

/**
 * Draws a screen tree (DESIGN §4: objects with a "type", arrays of "children") as Android views:
 * "screen"/"column" → a vertical LinearLayout in a ScrollView, "row" → a horizontal one, "text"
 * → TextView, "button" → Button (its "action" is the app's to handle), "image" → a placeholder
 * TextView here. Anything else throws {@link UnknownComponent}. Main thread only.
 */
final class TreeRenderer {
    private final Context context;

    TreeRenderer(Context context) {
        this.context = context;
    }

    View render(Json tree) throws UnknownComponent {
        ScrollView scroll = new ScrollView(context);
        scroll.addView(node(tree));
        return scroll;
    }

    private View node(Json node) throws UnknownComponent {
        Json type = node.get("type");
        String kind = type == null || type.kind() != Json.Kind.STRING ? "" : type.asString();
        switch (kind) {
            case "screen":
            case "column":
                return container(node, LinearLayout.VERTICAL);
            case "row":
                return container(node, LinearLayout.HORIZONTAL);
            case "text": {
                TextView text = new TextView(context);
                text.setText(string(node, "text"));
                return text;
            }
            case "button": {
                Button button = new Button(context);
                button.setText(string(node, "title"));
                return button;
            }
            case "image": {
                TextView placeholder = new TextView(context);
                placeholder.setText("[" + string(node, "url") + "]");
                return placeholder;
            }
            default:
                throw new UnknownComponent(kind);
        }
    }

    private View container(Json node, int orientation) throws UnknownComponent {
        LinearLayout layout = new LinearLayout(context);
        layout.setOrientation(orientation);
        Json children = node.get("children");
        if (children != null && children.kind() == Json.Kind.ARRAY) {
            for (Json child : children.items()) layout.addView(node(child));
        }
        return layout;
    }

    private static String string(Json node, String key) {
        Json value = node.get(key);
        return value != null && value.kind() == Json.Kind.STRING ? value.asString() : "";
    }
}
