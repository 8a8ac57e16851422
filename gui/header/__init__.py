"""What the open chat says about itself: its title (chat_heading), the model that answers
(model_picker), how much of the context window it uses (context_meter), and over a new
chat, the greeting."""
