(define (domain basic-domain)
  (:requirements :strips :typing :conditional-effects)
  (:types item dish receptacle)
  (:predicates
    (holding ?i - item)
    (hands_free)
    (on ?i - item ?d - dish)
    (item_on ?i - item ?r - receptacle)
    (dish_on ?d - dish ?r - receptacle)
    (plate_dirty ?d - dish)
  )
  (:action pick_up
    :parameters (?i - item ?r - receptacle)
    :precondition (and (item_on ?i ?r) (hands_free))
    :effect (and (holding ?i) (not (item_on ?i ?r)) (not (hands_free))))
  (:action rinse
    :parameters (?d - dish ?s - receptacle)
    :precondition (and (dish_on ?d ?s) (hands_free))
    :effect (not (plate_dirty ?d)))
  (:action put_on_dish
    :parameters (?i - item ?d - dish)
    :precondition (holding ?i)
    :effect (and (on ?i ?d) (hands_free) (not (holding ?i))))
)
